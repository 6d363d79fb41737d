"""``experiment compare A B``: items paired, verdicts tested, every regression explained.

Items of the two experiments pair by item id and their repeats by number. An
item whose pairs pass and fail is *improved* (more pairs B passes and A fails
than the reverse), *regressed* (the reverse) or *unchanged*; an item scored
without a pass (a verdict only) is *changed* or *unchanged*. Each item gets the
exact two-sided sign test (McNemar's, binomial with p = 1/2) over its discordant
pairs, and the dataset one over its improved and regressed items.

A regressed item is explained (:mod:`lens.explain._experiment_cause`): the first
decision where B's run left A's (``diff``), and, where B's configuration differs
from A's by injections (their ``injection.declared`` ids and content hashes), the
piece whose removal from B makes B's verdict A's again.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from recorder._experiments import Experiment, ExperimentResult

__all__ = ["Change", "Comparison", "ItemComparison", "compare_experiments", "exact_p"]

Change = Literal["improved", "regressed", "unchanged", "changed"]


def exact_p(worse: int, better: int) -> float:
    """Two-sided exact sign test of ``worse`` against ``better`` discordant pairs under
    p = 1/2 (McNemar's exact test): 1.0 with no discordant pair."""
    n = worse + better
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(worse, better) + 1))
    return min(1.0, float(2 * tail / 2**n))


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemComparison:
    """One item in A and in B."""

    item_id: str
    change: Change
    pairs: int
    regressed_pairs: int
    improved_pairs: int
    p_value: float
    a_passed: int
    b_passed: int
    a_run: str | None
    b_run: str | None
    a_verdict: str
    b_verdict: str
    a_answer: str | None
    b_answer: str | None
    cost_delta_usd: float | None
    latency_delta_ms: float
    divergence: str | None = None
    cause: str | None = None
    cause_note: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """Two experiments, item by item."""

    a: Experiment
    b: Experiment
    items: tuple[ItemComparison, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    def count(self, change: Change) -> int:
        return sum(1 for i in self.items if i.change == change)

    @property
    def p_value(self) -> float:
        """The exact sign test of the regressed items against the improved ones."""
        return exact_p(self.count("regressed"), self.count("improved"))

    @property
    def cost_delta_usd(self) -> float | None:
        deltas = [i.cost_delta_usd for i in self.items]
        return None if any(d is None for d in deltas) else sum(d or 0.0 for d in deltas)

    @property
    def latency_delta_ms(self) -> float:
        """The mean of the items' latency deltas (B minus A)."""
        return statistics.fmean(i.latency_delta_ms for i in self.items) if self.items else 0.0


def _by_item(results: Sequence[ExperimentResult]) -> dict[str, dict[int, ExperimentResult]]:
    out: dict[str, dict[int, ExperimentResult]] = {}
    for r in results:
        out.setdefault(r.item_id, {})[r.repeat] = r
    return out


def _mean_cost(rs: Sequence[ExperimentResult]) -> float | None:
    costs = [r.cost_usd for r in rs]
    return None if any(c is None for c in costs) else statistics.fmean(c or 0.0 for c in costs)


def _change(pairs: list[tuple[ExperimentResult, ExperimentResult]]) -> tuple[Change, int, int]:
    if all(a.passed is not None and b.passed is not None for a, b in pairs):
        worse = sum(1 for a, b in pairs if a.passed and not b.passed)
        better = sum(1 for a, b in pairs if b.passed and not a.passed)
        change: Change = ("regressed" if worse > better else "improved" if better > worse
                          else "unchanged")
        return change, worse, better
    differ = sum(1 for a, b in pairs if a.verdict != b.verdict)
    return ("changed" if differ else "unchanged"), 0, 0


def _pair(item_id: str, a: dict[int, ExperimentResult],
          b: dict[int, ExperimentResult]) -> ItemComparison:
    pairs = [(a[r], b[r]) for r in sorted(set(a) & set(b))]
    change, worse, better = _change(pairs)
    shown = next(((x, y) for x, y in pairs if x.passed and not y.passed), pairs[0])
    costs = (_mean_cost(list(a.values())), _mean_cost(list(b.values())))
    return ItemComparison(
        item_id=item_id, change=change, pairs=len(pairs), regressed_pairs=worse,
        improved_pairs=better, p_value=exact_p(worse, better),
        a_passed=sum(1 for r in a.values() if r.passed),
        b_passed=sum(1 for r in b.values() if r.passed),
        a_run=shown[0].run_id, b_run=shown[1].run_id, a_verdict=shown[0].verdict,
        b_verdict=shown[1].verdict, a_answer=shown[0].answer, b_answer=shown[1].answer,
        cost_delta_usd=None if None in costs else (costs[1] or 0.0) - (costs[0] or 0.0),
        latency_delta_ms=statistics.fmean(r.latency_ms for r in b.values())
        - statistics.fmean(r.latency_ms for r in a.values()))


def compare_experiments(a: Experiment, b: Experiment) -> Comparison:
    """Pair the items of ``a`` (the baseline) and ``b`` (the candidate); regressions are
    not explained yet (:func:`lens.explain._experiment_cause.explain_regressions`)."""
    ra, rb = _by_item(a.results), _by_item(b.results)
    shared = [i for i in ra if i in rb and set(ra[i]) & set(rb[i])]
    return Comparison(a=a, b=b, items=tuple(_pair(i, ra[i], rb[i]) for i in shared),
                      only_a=tuple(i for i in ra if i not in shared),
                      only_b=tuple(i for i in rb if i not in shared))
