"""The why comparator's facts: one time, amount or number however it is written."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.explain._facts import canonical, fact_key, facts
from lens.explain._outcome import changes, effect, make_comparator, wording

hours = st.integers(min_value=0, max_value=23)
amounts = st.integers(min_value=1, max_value=999_999)


def _twelve(hour: int, sep: str = " ", upper: bool = False) -> str:
    suffix = "pm" if hour >= 12 else "am"
    return f"{(hour - 1) % 12 + 1}{sep}{suffix.upper() if upper else suffix}"


@given(hours, st.sampled_from([" ", ""]), st.booleans())
def test_given_one_hour_written_three_ways_when_normalised_then_the_answers_are_equal(
    hour: int, sep: str, upper: bool,
) -> None:
    a = f"The review is at {hour}:00 on Thursday."
    b = f"The review is at {_twelve(hour, sep=sep, upper=upper)} on Thursday."
    c = f"The review is at {(hour - 1) % 12 + 1}:00 {'PM' if hour >= 12 else 'AM'} on Thursday."
    assert canonical(a) == canonical(b) == canonical(c)
    assert changes(a, b) == () and changes(a, c) == ()


@given(hours, hours)
def test_given_two_different_hours_when_normalised_then_they_differ_and_the_change_is_named(
    h1: int, h2: int,
) -> None:
    a, b = f"Meet at {h1}:00.", f"Meet at {_twelve(h2)}."
    assert (canonical(a) == canonical(b)) == (h1 == h2)
    if h1 != h2:
        assert changes(a, b) == (f"{h1}:00 → {_twelve(h2)}",)


@given(amounts, st.sampled_from(["€{n}", "{n} EUR", "EUR {n}", "{n} euros", "{n}.00 EUR"]))
def test_given_an_amount_in_any_euro_form_when_normalised_then_it_is_one_fact(
    n: int, form: str,
) -> None:
    assert fact_key(form.format(n=n)) == f"money:{n} eur"


@given(amounts, amounts)
def test_given_two_amounts_when_compared_then_only_different_values_are_a_change(
    a: int, b: int,
) -> None:
    x, y = f"It costs {a} EUR.", f"It costs €{b}."
    assert (changes(x, y) == ()) == (a == b)


@given(st.integers(min_value=1000, max_value=10**9))
def test_given_thousands_separators_when_normalised_then_the_number_is_the_same(n: int) -> None:
    assert canonical(f"You owe {n:,} points.") == canonical(f"You owe {n} points.")


def test_given_dates_and_units_when_normalised_then_equal_values_agree() -> None:
    assert fact_key("due 2026-03-12") == fact_key("due 12 March 2026") == fact_key(
        "due March 12, 2026")
    assert fact_key("holds 40 kg") == fact_key("holds 40000 g")
    assert fact_key("holds 40 kg") != fact_key("holds 25 kg")


def test_given_a_reworded_time_when_changes_are_named_then_no_number_change_is_invented() -> None:
    assert changes("The sync is at 1 pm.", "The sync is at 13:00.") == ()
    assert wording("The sync is at 1 pm.", "The sync is at 13:00.") == ("'1 pm.' → '13:00.'",)


def test_given_a_lost_answer_when_its_effect_is_read_then_it_is_necessary_not_a_value() -> None:
    recorded = "The C40 grinder costs 189 EUR."
    assert effect(recorded, "The C40 grinder costs 149 EUR.") == "value"
    assert effect(recorded, "Sorry, I have no price for the C40 grinder.") == "necessary"
    assert effect("APPROVED: refund issued.", "DECLINED: outside the window.") == "value"


def test_given_expect_a_time_when_the_answer_words_it_otherwise_then_it_matches() -> None:
    expect = make_comparator(expect="11:00")
    assert expect.key("The review is at 11 am.") == "expected"
    assert expect.key("The review is at 1 pm.") == "unexpected"


def test_given_the_default_comparator_when_only_formats_differ_then_the_keys_agree() -> None:
    default = make_comparator()
    assert default.key("Tasting at 1 pm; €45.") == default.key("Tasting at 13:00; 45 EUR.")
    assert default.key("Tasting at 1 pm; €45.") != default.key("Tasting at 1 pm; €55.")
    assert facts("no facts here") == ()
