"""The why search against outcome functions it was not tuned for (hypothesis).

The re-runner here is the outcome function itself, deterministic: a set of
removals "changes" the answer when it contains a whole culprit set and no
piece of a masking set (removing the masking piece too restores the answer,
like a policy whose absence makes the forced answer right again). The agent
re-runs are exercised end to end by the planted examples; these properties
pin the search's own promises on any shape of culprits:

* every piece whose removal alone changes the answer is found and confirmed;
* a piece is cleared only if its removal alone held the answer;
* every confirmed set really changes the answer, and is minimal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from lens.explain._candidates import Removal
from lens.explain._rerun import Rerun
from lens.explain._search import SCREEN_SEED0, search
from lens.explain._stats import Tally
from lens.explain._tier import Tier

ALPHA = 0.05


@dataclass
class Outcome:
    culprits: list[frozenset[Removal]]
    masks: frozenset[Removal]
    runs: int = 0
    tier: ClassVar[Tier] = Tier.RERUN

    def changes(self, removed: frozenset[Removal]) -> bool:
        hit = any(c <= removed for c in self.culprits)
        return hit and not (removed & self.masks)

    def rerun(self, removals: Sequence[Removal], seed: int, *, live: bool = False,
              what: str = "") -> Rerun:
        self.runs += 1
        changed = self.changes(frozenset(removals))
        return Rerun(run="changed" if changed else "same", answer="B" if changed else "A")


def _units(n: int) -> list[Removal]:
    return [Removal(what="injection", key=f"piece-{i:02d}") for i in range(n)]


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[list[Removal], Outcome]:
    units = _units(draw(st.integers(min_value=1, max_value=14)))
    picks = st.sampled_from(units)
    culprits = draw(st.lists(st.frozensets(picks, min_size=1, max_size=2), max_size=2))
    taken = {u for c in culprits for u in c}
    masks = draw(st.frozensets(st.sampled_from(units), max_size=2)) - taken
    return units, Outcome(culprits=culprits, masks=frozenset(masks))


BASE = Tally(same=12)


@settings(max_examples=150, deadline=None)
@given(outcomes())
def test_given_any_culprits_and_masks_when_searched_then_every_single_culprit_is_confirmed(
    case: tuple[list[Removal], Outcome],
) -> None:
    units, outcome = case
    result = search(outcome, BASE, units, seeds=12, alpha=ALPHA / len(units))  # type: ignore[arg-type]
    confirmed = {f.removals for f in result.findings if f.test.verdict == "confirmed"}
    for unit in units:
        if outcome.changes(frozenset({unit})):
            assert (unit,) in confirmed, (unit, result)


@settings(max_examples=150, deadline=None)
@given(outcomes())
def test_given_any_culprits_and_masks_when_searched_then_only_pieces_held_alone_are_cleared(
    case: tuple[list[Removal], Outcome],
) -> None:
    units, outcome = case
    result = search(outcome, BASE, units, seeds=12, alpha=ALPHA / len(units))  # type: ignore[arg-type]
    for unit in result.cleared:
        assert not outcome.changes(frozenset({unit})), (unit, result)
    assert set(result.untested) == set(units) - result.cleared - result.broke - {
        r for f in result.findings for r in f.removals}


@settings(max_examples=150, deadline=None)
@given(outcomes())
def test_given_any_culprits_and_masks_when_a_set_is_confirmed_then_it_changes_and_is_minimal(
    case: tuple[list[Removal], Outcome],
) -> None:
    units, outcome = case
    result = search(outcome, BASE, units, seeds=12, alpha=ALPHA / len(units))  # type: ignore[arg-type]
    for f in result.findings:
        if f.test.verdict != "confirmed":
            continue
        removed = frozenset(f.removals)
        assert outcome.changes(removed)
        for member in removed:
            assert not outcome.changes(removed - {member}) or len(removed) == 1, f


def test_given_a_culprit_masked_by_its_neighbour_when_searched_then_it_is_still_confirmed(
) -> None:
    units = _units(6)
    steering, policy = units[2], units[4]
    outcome = Outcome(culprits=[frozenset({steering})], masks=frozenset({policy}))
    result = search(outcome, BASE, units, seeds=12, alpha=ALPHA / 6)  # type: ignore[arg-type]
    confirmed = [f.removals for f in result.findings if f.test.verdict == "confirmed"]
    assert confirmed == [(steering,)]
    assert policy in result.cleared
    assert result.untested == ()


@dataclass
class ScreenOnly:
    """A pair whose removal changed the answer in the screens only (noise), never again."""

    pair: frozenset[Removal]
    confirming: list[tuple[Removal, ...]]
    tier: ClassVar[Tier] = Tier.RERUN

    def rerun(self, removals: Sequence[Removal], seed: int, *, live: bool = False,
              what: str = "") -> Rerun:
        if what.startswith("confirm"):
            self.confirming.append(tuple(removals))
        changed = seed >= SCREEN_SEED0 and self.pair <= frozenset(removals)
        return Rerun(run="changed" if changed else "same", answer="B" if changed else "A")


def test_given_a_set_that_does_not_hold_when_confirmed_then_its_members_get_no_tests_alone(
) -> None:
    units = _units(6)
    noise = ScreenOnly(pair=frozenset(units[1:3]), confirming=[])
    result = search(noise, BASE, units, seeds=12, alpha=ALPHA / len(units))  # type: ignore[arg-type]
    (finding,) = result.findings
    assert finding.removals == tuple(units[1:3]) and finding.test.verdict == "not-confirmed"
    assert [a.verdict for _, a in finding.alone] == ["not-confirmed", "not-confirmed"]
    assert all(a.tally.runs == 0 for _, a in finding.alone)
    assert noise.confirming and all(len(r) == 2 for r in noise.confirming)
