"""The statistics behind a causal claim: an exact test, never a majority vote alone.

A baseline of ``n0`` live re-runs of the unchanged agent gives ``k0`` runs
whose outcome differs from the recording (the model's own noise). Removing a
suspect gives ``k1`` changed runs out of ``n1`` runs that answered (runs that
raised or never answered are ``broke`` and count for nothing). The suspect
is ``confirmed`` only when

* a one-sided Fisher exact test says ``k1/n1`` exceeds ``k0/n0`` with
  p-value <= ``alpha'`` (``alpha`` divided by the number of candidates the
  search chose among: Bonferroni, so picking the best of many is paid for),
* more than half of its answered re-runs changed, and
* the baseline mostly reproduced the recording (at most one run in eight changed).

Runs go one at a time with early stopping: as soon as the claim is made, as
soon as it can no longer be made with the seeds left, or — when the baseline
never changed (a deterministic agent) — after two unchanged re-runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import comb
from typing import Literal

from lens.explain._tier import Tier, Words

__all__ = [
    "Ablation",
    "Tally",
    "Verdict",
    "fisher_greater",
    "judge",
    "seeds_needed",
    "sequential",
]

Verdict = Literal["confirmed", "not-confirmed", "inconclusive", "broke", "untested"]
Run = Literal["same", "changed", "broke"]


def fisher_greater(k0: int, n0: int, k1: int, n1: int) -> float:
    """One-sided Fisher exact p-value that group 1's rate of changes exceeds group 0's."""
    if n1 == 0:
        return 1.0
    total, n = k0 + k1, n0 + n1
    denom = comb(n, total)
    hi = min(n1, total)
    return sum(comb(n1, x) * comb(n0, total - x) for x in range(k1, hi + 1)) / denom


def seeds_needed(n0: int, alpha: float, cap: int = 64) -> int | None:
    """Fewest all-changed re-runs that reach ``alpha`` against a 0/``n0`` baseline."""
    for n1 in range(1, cap + 1):
        if fisher_greater(0, n0, n1, n1) <= alpha:
            return n1
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    """Re-runs of one arm: how many changed, stayed the same, or broke."""

    changed: int = 0
    same: int = 0
    broke: int = 0

    @property
    def answered(self) -> int:
        return self.changed + self.same

    @property
    def runs(self) -> int:
        return self.changed + self.same + self.broke

    def add(self, run: Run) -> Tally:
        return Tally(changed=self.changed + (run == "changed"),
                     same=self.same + (run == "same"), broke=self.broke + (run == "broke"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Ablation:
    """The tested arm against the baseline: its tally, p-value and verdict."""

    tally: Tally
    p_value: float
    verdict: Verdict
    note: str = ""

    @property
    def confidence(self) -> float:
        return round(1.0 - self.p_value, 6)


def baseline_stable(base: Tally) -> bool:
    """The unchanged agent reproduced the recording in at least seven eighths of its runs."""
    return base.answered > 0 and 8 * base.changed <= base.answered


def judge(base: Tally, arm: Tally, alpha: float, seeds: int,
          words: Words = Tier.RERUN.words) -> Ablation:
    """The verdict for ``arm`` (finished, or stopped early) against ``base``; its note in
    ``words`` (the tier's)."""
    p = fisher_greater(base.changed, base.answered, arm.changed, arm.answered)
    if arm.answered == 0:
        note = (f"every {words.trial} raised or never answered" if arm.broke
                else f"no {words.trial} made")
        return Ablation(tally=arm, p_value=1.0,
                        verdict="broke" if arm.broke else "untested", note=note)
    if 2 * arm.broke > arm.runs:
        return Ablation(tally=arm, p_value=p, verdict="broke",
                        note=f"{arm.broke}/{arm.runs} {words.trials} raised or never answered")
    if arm.changed == 0:
        return Ablation(tally=arm, p_value=p, verdict="not-confirmed")
    if not baseline_stable(base):
        return Ablation(tally=arm, p_value=p, verdict="inconclusive",
                        note=f"{words.unchanged}'s own answers vary too much")
    if p <= alpha and 2 * arm.changed > arm.answered:
        return Ablation(tally=arm, p_value=p, verdict="confirmed")
    best = fisher_greater(0, base.answered, seeds, seeds)
    if best > alpha:
        return Ablation(tally=arm, p_value=p, verdict="inconclusive",
                        note=f"{seeds} seeds cannot reach the required confidence; "
                             f"use --seeds {seeds_needed(base.answered, alpha) or 'more'}")
    return Ablation(tally=arm, p_value=p, verdict="inconclusive")


def _hopeless(base: Tally, arm: Tally, alpha: float, seeds: int) -> bool:
    left = seeds - arm.runs
    best = Tally(changed=arm.changed + left, same=arm.same, broke=arm.broke)
    return (arm.changed == 0 and left == 0) or fisher_greater(
        base.changed, base.answered, best.changed, best.answered) > alpha or (
        2 * best.changed <= best.answered)


def _reader(base: Tally | Callable[[], Tally]) -> Callable[[], Tally]:
    if isinstance(base, Tally):
        fixed: Tally = base
        return lambda: fixed
    return base


def sequential(base: Tally | Callable[[], Tally], run: Callable[[int], Run], seeds: int,
               alpha: float, seed0: int = 0, words: Words = Tier.RERUN.words) -> Ablation:
    """Re-run up to ``seeds`` times, stopping once the verdict can no longer change.

    ``base`` may be read afresh after each re-run (a baseline that grows with re-runs
    interleaved between the arm's own); notes in ``words``."""
    now = _reader(base)
    arm = Tally()
    for i in range(seeds):
        arm = arm.add(run(seed0 + i))
        base = now()
        verdict = judge(base, arm, alpha, seeds, words)
        if verdict.verdict == "confirmed":
            return verdict
        if arm.changed == 0 and arm.answered >= 1 and _hopeless(base, arm, alpha, seeds):
            return verdict
        if base.changed == 0 and arm.changed == 0 and arm.answered >= 2:
            return verdict  # a deterministic agent: two unchanged re-runs settle it
        if 2 * arm.broke > seeds:
            return judge(base, arm, alpha, seeds, words)
    return judge(now(), arm, alpha, seeds, words)
