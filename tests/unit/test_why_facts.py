"""The why comparator's facts: one time, amount or number however it is written."""

from __future__ import annotations

import calendar
from datetime import date
from fractions import Fraction
from typing import Any

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


def test_given_a_lost_answer_when_its_effect_is_read_then_it_is_lost_not_a_value() -> None:
    recorded = "The C40 grinder costs 189 EUR."
    assert effect(recorded, "The C40 grinder costs 149 EUR.") == "value"
    assert effect(recorded, "Sorry, I have no price for the C40 grinder.") == "lost"
    assert effect(recorded, "") == "lost"
    assert effect(recorded, 'price_feed({"sku": "C40"})') == "lost"  # a tool call, no answer


def test_given_another_well_formed_answer_when_its_effect_is_read_then_it_is_a_value() -> None:
    approved = "APPROVED: the 450 EUR refund was issued automatically."
    assert effect(approved, "PENDING-REVIEW, CASE-77") == "value"
    assert effect("archive(order='G-7')", "live(order='G-7')") == "value"  # the tool chosen
    assert effect("Total: 197.50 GBP.", "The total comes to £197.50.") == "wording"
    assert effect("Total: 810,00 €.", "Total: €810.00, thank you.") == "wording"
    desk = "APPROVED: order A-1047 is 47 days old, within the 60-day window; $40 refunded."
    assert effect(desk, "DECLINED: order A-1047 is 47 days old, outside the 30-day window."
                  ) == "value"  # APPROVED → DECLINED, 60 → 30 given; only $40 dropped
    assert effect(desk, "DECLINED: no refund. [desk]") == "lost"  # its facts gone, none given
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


days = st.dates(min_value=date(1990, 1, 1), max_value=date(2060, 12, 31))
_YEARLESS = ("{d:%B} {d.day}", "{d.day} {d:%B}", "{d:%b} {d.day}", "{d:%B} {d.day}{th}",
             "{d.day}{th} of {d:%B}")


def _th(day: int) -> str:
    return "th" if 10 < day % 100 < 14 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


@given(days, st.sampled_from(_YEARLESS))
def test_given_a_date_written_without_its_year_when_compared_with_the_full_date_then_same(
    day: date, form: str,
) -> None:
    short = "Renews on " + form.format(d=day, th=_th(day.day)) + "."
    full = f"Renews on {day.isoformat()}."
    assert [f.kind for f in facts(short)] == ["date"]
    assert changes(full, short) == () and changes(short, full) == ()
    normal = make_comparator()
    assert normal.rerun_key(short, full) == normal.recorded_key(short)
    assert normal.rerun_key(full, short) == normal.recorded_key(full)
    assert effect(short, full) == "value"


@given(days, days, st.sampled_from(_YEARLESS))
def test_given_two_different_days_without_a_year_when_compared_then_the_change_is_named(
    a: date, b: date, form: str,
) -> None:
    x = "Renews on " + form.format(d=a, th=_th(a.day)) + "."
    y = "Renews on " + form.format(d=b, th=_th(b.day)) + "."
    normal = make_comparator()
    same_day = (a.month, a.day) == (b.month, b.day)
    assert (normal.rerun_key(x, y) == normal.recorded_key(x)) == same_day
    assert (changes(x, y) == ()) == same_day
    assert (normal.rerun_key(x, f"Renews on {b.isoformat()}.") == normal.recorded_key(x)) == (
        same_day)


def test_given_full_dates_of_two_years_when_compared_then_the_year_is_a_change() -> None:
    assert changes("Renews on 2025-03-03.", "Renews on 2026-03-03.") == (
        "2025-03-03 → 2026-03-03",)
    assert changes("Renews on March 3, 2025.", "Renews on March 3.") == ()


def test_given_expect_a_full_date_when_the_answer_drops_the_year_then_it_matches() -> None:
    expect = make_comparator(expect="2026-04-03")
    assert expect.rerun_key("Renews on March 3.", "Renews on April 3.") == "expected"
    assert expect.rerun_key("Renews on March 3.", "Renews on March 3.") == "unexpected"


_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen")
_TENS_WORDS = ("_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
               "ninety")


def _spelled(n: int, hyphen: bool) -> str:
    """An English cardinal, written out (the test's own writer, not the parser's tables)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tail = "" if n % 10 == 0 else ("-" if hyphen else " ") + _ONES[n % 10]
        return _TENS_WORDS[n // 10] + tail
    if n < 1000:
        rest = "" if n % 100 == 0 else " and " + _spelled(n % 100, hyphen)
        return f"{_ONES[n // 100]} hundred{rest}"
    rest = "" if n % 1000 == 0 else " " + _spelled(n % 1000, hyphen)
    return f"{_spelled(n // 1000, hyphen)} thousand{rest}"


@given(st.integers(min_value=0, max_value=999_999), st.booleans(), st.booleans())
def test_given_a_number_written_in_words_when_normalised_then_it_is_the_number(
    n: int, hyphen: bool, capital: bool,
) -> None:
    words = _spelled(n, hyphen)
    words = words[0].upper() + words[1:] if capital else words
    assert canonical(f"{words} seats are left.") == canonical(f"{n} seats are left.")
    assert changes(f"{n} seats are left.", f"{words} seats are left.") == ()


@given(st.integers(min_value=0, max_value=999), st.integers(min_value=0, max_value=999))
def test_given_two_numbers_in_words_when_compared_then_only_different_values_change(
    a: int, b: int,
) -> None:
    x, y = f"There are {_spelled(a, True)} seats.", f"There are {_spelled(b, True)} seats."
    assert (canonical(x) == canonical(y)) == (a == b)
    assert (changes(x, y) == ()) == (a == b)


def test_given_number_words_that_make_no_number_when_read_then_they_stay_wording() -> None:
    assert facts("pick one two") == () and facts("eleven five") == ()
    assert [f.value for f in facts("someone said nothing")] == []


@given(amounts, st.sampled_from(["{n} EUR", "€{n}", "{n}.00 EUR", "{n} kg", "{n} %"]))
def test_given_expect_a_bare_number_when_the_answer_gives_it_with_a_unit_then_it_matches(
    n: int, form: str,
) -> None:
    expect = make_comparator(expect=str(n))
    assert expect.key(f"The total is {form.format(n=n)}.") == "expected"
    assert expect.key(f"The total is {form.format(n=n + 1)}.") == "unexpected"


def test_given_expect_an_amount_with_its_unit_when_the_unit_differs_then_it_does_not_match(
) -> None:
    assert make_comparator(expect="920 EUR").key("It is 920 USD.") == "unexpected"
    assert make_comparator(expect="40 kg").key("It holds 40 lb.") == "unexpected"
    assert make_comparator(expect="920.00 EUR").key("It is €920.") == "expected"


_SAME_AMOUNT = (  # (unit, factor to the first unit of its row): one quantity, many spellings
    (("h", 1), ("hours", 1), ("hour", 1), ("minutes", 60), ("min", 60), ("seconds", 3600)),
    (("days", 1), ("hours", 24), ("weeks", Fraction(1, 7))),
    (("kg", 1), ("kilograms", 1), ("kilos", 1), ("g", 1000), ("grams", 1000)),
    (("km", 1), ("kilometres", 1), ("kilometers", 1), ("m", 1000), ("metres", 1000)),
    (("l", 1), ("litres", 1), ("liters", 1), ("ml", 1000), ("millilitres", 1000)),
    (("years", 1), ("year", 1), ("months", 12)),
)


@given(st.integers(min_value=1, max_value=500), st.sampled_from(_SAME_AMOUNT), st.data())
def test_given_one_quantity_in_two_units_when_normalised_then_it_is_one_fact(
    n: int, row: tuple[tuple[str, int | Fraction], ...], data: st.DataObject,
) -> None:
    (u1, f1), (u2, f2) = data.draw(st.permutations(row))[:2]
    a, b = n * f1 * 7, n * f2 * 7  # a multiple of 7 keeps weeks whole
    assert canonical(f"It takes {a} {u1}.") == canonical(f"It takes {b} {u2}."), (a, u1, b, u2)
    assert changes(f"It takes {a} {u1}.", f"It takes {b} {u2}.") == ()
    assert changes(f"It takes {a} {u1}.", f"It takes {b + 1} {u2}.") != ()


@given(st.sampled_from(["APPROVED", "DECLINED", "PENDING"]), st.sampled_from(
    [str.lower, str.title, str.upper]))
def test_given_a_status_word_in_another_case_when_normalised_then_it_is_wording(
    word: str, case: Any,
) -> None:
    assert canonical(f"{word}: refund issued.") == canonical(f"{case(word)}: refund issued.")


def test_given_two_status_words_when_compared_then_the_change_is_still_named() -> None:
    assert canonical("APPROVED: refund.") != canonical("DECLINED: refund.")
    assert changes("APPROVED: refund.", "DECLINED: refund.") == ("APPROVED → DECLINED",)


@given(st.integers(min_value=0, max_value=6), st.sampled_from([0, 1, 2]))
def test_given_a_weekday_abbreviated_when_normalised_then_it_is_the_same_day(
    day: int, style: int,
) -> None:
    full = calendar.day_name[day]
    short = (calendar.day_abbr[day], full[:3] + ".", full.lower())[style]
    assert canonical(f"We meet on {full}.") == canonical(f"We meet on {short}.")
    assert changes(f"We meet on {full}.", f"We meet on {short}.") == ()


@given(amounts, st.sampled_from(["{n} eur", "{n} Euros", "{n} usd", "eur {n}"]))
def test_given_a_currency_in_lower_case_when_normalised_then_it_is_money(n: int, form: str) -> None:
    assert [f.kind for f in facts(form.format(n=n))] == ["money"]


def test_given_expect_a_word_when_the_answer_holds_a_longer_word_then_it_does_not_match(
) -> None:
    assert make_comparator(expect="APPROVED").key("DISAPPROVED: no refund.") == "unexpected"
    assert make_comparator(expect="APPROVED").key("Approved: refund issued.") == "expected"
    assert make_comparator(expect="yes").key("Asked yesterday.") == "unexpected"
    assert make_comparator(expect="5 EUR").key("It costs 15 EUR.") == "unexpected"
