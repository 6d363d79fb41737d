"""The exact test behind a causal claim, and the comparators that decide "changed"."""

from __future__ import annotations

import random
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from lens.explain._outcome import changes, is_redacted, make_comparator, normalise
from lens.explain._stats import Tally, fisher_greater, judge, seeds_needed, sequential


@given(st.integers(0, 12), st.integers(0, 12), st.data())
def test_given_any_two_arms_when_fisher_is_computed_then_it_is_a_probability(
    n0: int, n1: int, data: st.DataObject,
) -> None:
    k0 = data.draw(st.integers(0, n0))
    k1 = data.draw(st.integers(0, n1))
    p = fisher_greater(k0, n0, k1, n1)
    assert 0.0 <= p <= 1.0 + 1e-12
    if k1 < n1:  # one more change in the tested arm never makes the claim weaker
        assert fisher_greater(k0, n0, k1 + 1, n1) <= p + 1e-12


def test_given_a_perfect_split_when_fisher_is_computed_then_it_is_one_over_the_binomial() -> None:
    assert fisher_greater(0, 8, 4, 4) == pytest.approx(1 / comb(12, 4))
    assert seeds_needed(8, 0.05 / 6) == 3


def test_given_broke_runs_when_judged_then_they_never_count_as_changes() -> None:
    base = Tally(same=8)
    arm = Tally(broke=5)
    verdict = judge(base, arm, 0.01, 5)
    assert verdict.verdict == "broke" and verdict.tally.changed == 0


def test_given_an_unstable_baseline_when_every_ablation_changes_then_it_is_inconclusive() -> None:
    verdict = judge(Tally(same=5, changed=3), Tally(changed=8), 0.01, 8)
    assert verdict.verdict == "inconclusive"


def _false_confirmations(p: float, trials: int, alpha: float) -> int:
    rng = random.Random(11)
    hits = 0
    for _ in range(trials):
        base = Tally()
        for i in range(24):  # twelve runs, twelve more when any of them changed
            if i == 12 and base.changed == 0:
                break
            base = base.add("changed" if rng.random() < p else "same")
        if base.same == 0:
            continue
        got = sequential(base, lambda _s: "changed" if rng.random() < p else "same", 8, alpha)
        hits += got.verdict == "confirmed"
    return hits


@pytest.mark.parametrize("p", [0.5, 0.1])
def test_given_a_model_that_flips_at_random_when_tested_then_innocents_are_almost_never_confirmed(
    p: float,
) -> None:
    assert _false_confirmations(p, 2000, 0.05 / 6) <= 6  # <= 0.3 % of the tests


def test_given_a_deterministic_culprit_when_tested_then_it_is_confirmed_in_few_runs() -> None:
    runs: list[int] = []
    got = sequential(Tally(same=12), lambda s: runs.append(s) or "changed", 12, 0.05 / 6)
    assert got.verdict == "confirmed" and len(runs) == 3 and got.confidence > 0.99


def test_given_a_deterministic_innocent_when_tested_then_it_stops_early() -> None:
    runs: list[int] = []
    got = sequential(Tally(same=8), lambda s: runs.append(s) or "same", 8, 0.05 / 6)
    assert got.verdict == "not-confirmed" and len(runs) == 2


@given(st.text())
def test_given_any_text_when_normalised_twice_then_nothing_more_changes(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)


def test_given_two_prices_when_compared_then_the_number_that_changed_is_named() -> None:
    assert changes("The grinder costs 149 EUR.", "The grinder costs 189 EUR.") == (
        "149 EUR → 189 EUR",)
    assert normalise("The grinder costs 149 EUR.") != normalise("The grinder costs 189 EUR.")
    assert make_comparator(label=True).key("The grinder costs 149 EUR.") == "The"


def test_given_a_redacted_answer_when_compared_then_the_hash_decides() -> None:
    marker = "[redacted sha256:" + "ab" * 32 + "]"
    assert is_redacted(marker) == "ab" * 32
    cmp = make_comparator()
    assert cmp.recorded_key(marker) == "sha256:" + "ab" * 32
    assert cmp.rerun_key(marker, "anything") != cmp.recorded_key(marker)


def test_given_bad_comparator_options_when_made_then_the_error_names_the_fix() -> None:
    with pytest.raises(ConfigError, match="not a valid regex"):
        make_comparator(expect="/(/")
    with pytest.raises(ConfigError, match="pick one"):
        make_comparator(expect="x", label=True)
