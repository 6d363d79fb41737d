"""The search: delta debugging over every removable candidate, then an exact test.

1. **Screen** (exploratory, no claim): remove a *group* of candidates and
   re-run on search seeds. The whole set first; a group whose removal
   changes the outcome is narrowed by halves (``minimize``: remove one half;
   if neither half alone changes it, the culprit needs both, and each half is
   narrowed with the other held out), so a single culprit costs ~log2 n
   probes and a redundant pair is found as a pair. A group whose re-runs
   all break is split until the breaking piece is alone. After a set is
   found, the rest is screened again for an independent one.
   A screen that holds the outcome clears nothing by itself when it removed
   several pieces at once: one removal can mask another (a steering that
   forces "yes" and the policy that would make it "no" removed together
   leave "yes"). So every piece not yet screened alone, and not in a set
   found, is then screened alone; only that clears it (``cleared``).
   When a change is only the outcome asked for (``--expect``), removing a
   piece the answer needs, or the source of the wanted answer, with the
   culprits hides their fix: such pieces stay in and the rest is screened
   again (:meth:`_Search.run`).
2. **Confirm** (the claim), as soon as the screens isolate a set, before any more
   screening (so a budget that stops the screening of innocents leaves the suspect
   tested): each found set, and each member of a *confirmed* set alone
   (a gate: a set that does not hold gives its members no tests of their own),
   is re-run on the *baseline's* seeds (fresh with respect to the screen,
   so picking the set does not bias its test), each re-run paired with a
   live baseline re-run on the same seed in a shuffled, seeded order (a
   server whose answers drift with its own history drifts in both arms),
   and judged by
   :func:`lens.explain._stats.sequential` at ``alpha`` / (number of removable
   candidates).

A budget that runs out stops the search; what was never tested is named, a test it
cut short is untested (never "changed in 0/N"), and the ``--budget`` that lets the
search finish is worked out from what is left (:func:`_enough`). :func:`plan_line`
says what the search will spend before any re-run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from lens.explain._candidates import Removal
from lens.explain._rerun import BudgetSpent
from lens.explain._stats import Ablation, Tally, Verdict, sequential
from lens.explain._tier import Words
from lens.explain._trial import Trial

__all__ = ["Finding", "Probe", "SearchResult", "plan_line", "screen_budget", "search"]

Screen = Literal["changed", "same", "broke"]
SCREEN_SEED0 = 1000
MINIMAL_SEED0 = 5000
MAX_SETS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """One screening probe: the group removed and what its re-runs did."""

    removed: frozenset[Removal]
    result: Screen
    runs: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """A confirmed-or-not culprit set, with each member's test alone when it has several."""

    removals: tuple[Removal, ...]
    test: Ablation
    answers: tuple[str, ...] = ()
    alone: tuple[tuple[Removal, Ablation], ...] = ()
    paired: Tally = field(default_factory=Tally)
    """The live baseline re-runs interleaved with the confirming test's own."""
    calls: tuple[str, ...] = ()
    """The tool calls of the first confirming re-run that changed the outcome."""
    without: tuple[tuple[Removal, Tally], ...] = ()
    """A confirmed set of three or more: for each member, the set removed *but* that member
    (is the member needed in the set?). A pair needs none: the other member's test alone
    is that experiment."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """Everything the search did."""

    findings: tuple[Finding, ...]
    probes: tuple[Probe, ...]
    cleared: frozenset[Removal]
    """Screened alone, and the outcome held."""
    broke: frozenset[Removal]
    untested: tuple[Removal, ...]
    stopped: str | None = None
    unjudged: frozenset[Removal] = frozenset()
    """Not searched, because no removal could be judged (``unjudged_why``)."""
    unjudged_why: str = ""
    isolated: tuple[tuple[Removal, ...], ...] = ()
    """Sets the screens isolated but the budget stopped before confirming."""
    spent: dict[Removal, int] = field(default_factory=dict)
    """Screen re-runs each removal took part in."""
    more: int | None = None
    """The ``--budget`` that would let the confirm step test what was isolated."""


@dataclass(slots=True)
class _Search:
    rerunner: Trial
    base: Tally
    screen_seeds: int
    probes: list[Probe] = field(default_factory=list)
    cleared: set[Removal] = field(default_factory=set)
    broke: set[Removal] = field(default_factory=set)
    found: list[tuple[Removal, ...]] = field(default_factory=list)
    alone: dict[Removal, Screen] = field(default_factory=dict)
    wanted: bool = False
    confirm: Callable[[tuple[Removal, ...]], None] | None = None
    """Run a set's confirming test as soon as the screens isolate it (before screening more)."""
    singling: bool = False
    """Screening each piece alone (the groups are done): what is left costs one screen each."""
    needed: set[Removal] = field(default_factory=set)
    """Screened alone, the answer was lost, yet the comparator read "same" (``--expect``:
    a lost answer is not the one wanted): removed with others, it hides their fix."""

    def screen(self, group: frozenset[Removal]) -> Screen:
        changed = same = lost = 0
        what = f"screen: {len(group)} removed"
        for i in range(self.screen_seeds):
            r = self.rerunner.rerun(sorted(group), SCREEN_SEED0 + len(self.probes) * 10 + i,
                                    what=what)
            changed += r.run == "changed"
            same += r.run == "same"
            lost += r.run == "same" and r.lost
        result: Screen = "broke" if changed + same == 0 else (
            "changed" if 2 * changed > changed + same else "same")
        self.probes.append(Probe(removed=group, result=result, runs=self.screen_seeds))
        if len(group) == 1:
            self.alone[next(iter(group))] = result
            if result == "same":
                self.cleared |= group
            if result == "same" and 2 * lost > same:
                self.needed |= group
        return result

    def isolate(self, removals: tuple[Removal, ...]) -> None:
        """A set the screens isolated: confirmed at once, so a budget that stops the
        screening of the rest still leaves the isolated suspect tested."""
        self.found.append(removals)
        if self.confirm is not None:
            self.confirm(removals)

    def explore(self, group: frozenset[Removal]) -> None:
        if not group:
            return
        result = self.screen(group)
        if result == "changed":
            self.isolate(tuple(sorted(self.minimize(sorted(group), frozenset()))))
        elif result == "broke":
            if len(group) == 1:
                self.broke |= group
                return
            a, b = _halves(sorted(group))
            self.explore(frozenset(a))
            self.explore(frozenset(b))

    def minimize(self, group: list[Removal], held: frozenset[Removal]) -> frozenset[Removal]:
        """A minimal subset of ``group`` whose removal (with ``held``) changes the outcome."""
        if len(group) == 1:
            return frozenset(group)
        a, b = _halves(group)
        if self.screen(held | frozenset(a)) == "changed":
            return self.minimize(a, held)
        if self.screen(held | frozenset(b)) == "changed":
            return self.minimize(b, held)
        from_a = self.minimize(a, held | frozenset(b))
        return from_a | self.minimize(b, held | from_a)

    def run(self, units: Sequence[Removal]) -> None:
        pool = frozenset(units)
        self.sets(pool)
        self.singling = True
        self.singles(units)
        self.singling = False
        if self.needed:  # the pieces the answer needs stay in; the rest is searched again
            self.sets(pool - self.needed, again=True)
        if self.wanted and not self.found and self.held_all(pool):
            kept = self.sources(pool - self.broke - self.needed)
            if kept:
                self.sets(pool - self.broke - self.needed - kept, again=True)

    def held_all(self, pool: frozenset[Removal]) -> bool:
        return any(p.removed == pool and p.result == "same" for p in self.probes)

    def sources(self, pool: frozenset[Removal]) -> frozenset[Removal]:
        """The pieces that, kept alone of ``pool``, give the outcome wanted: where the
        answer the user expects comes from (a true fact). Removing every piece also
        removed it, so no group screen could show a fix; it stays in from now on."""
        if len(pool) < 3:
            return frozenset()
        return frozenset(p for p in sorted(pool) if self.screen(pool - {p}) == "changed")

    def sets(self, pool: frozenset[Removal], *, again: bool = False) -> None:
        """Explore ``pool``, then what is left of it after each set found. ``again``: a
        second pass, whose members were all screened alone (a set among them is still
        possible: each alone may be redundant with another)."""
        rest = pool
        while rest and len(self.found) < MAX_SETS and (again or not rest <= self.cleared):
            before = len(self.found)
            if any(p.removed == rest and p.result == "changed" for p in self.probes):
                # screened already (all but a source of the wanted answer): narrow it
                self.isolate(tuple(sorted(self.minimize(sorted(rest), frozenset()))))
            else:
                self.explore(rest)
            if len(self.found) == before:
                break
            rest = pool - {r for s in self.found for r in s} - self.broke

    def singles(self, units: Sequence[Removal]) -> None:
        """Screen alone each piece only screened with others (see the module doc)."""
        in_sets = {r for s in self.found for r in s}
        for unit in units:
            if unit in self.alone or unit in in_sets or unit in self.broke:
                continue
            result = self.screen(frozenset({unit}))
            if result == "changed":
                self.isolate((unit,))
            elif result == "broke":
                self.broke.add(unit)


def _halves(group: list[Removal]) -> tuple[list[Removal], list[Removal]]:
    mid = (len(group) + 1) // 2
    return group[:mid], group[mid:]


def _confirm(rerunner: Trial, base: Tally, removals: Sequence[Removal], seeds: int,
             alpha: float, rng: random.Random
             ) -> tuple[Ablation, tuple[str, ...], Tally, tuple[str, ...]]:
    """The confirming test: each variant re-run paired with a live baseline re-run on the
    same seed, the two in a shuffled (seeded) order, and the test run against the baseline
    grown by those pairs — so a server whose output drifts with its own history shows
    that drift in the baseline too, not only in the variant."""
    label = ", ".join(r.describe() for r in removals)
    changed: list[str] = []
    calls: list[tuple[str, ...]] = []
    paired = [Tally()]

    def one(seed: int) -> Literal["same", "changed", "broke"]:
        arms = [True, False]
        rng.shuffle(arms)
        out: Literal["same", "changed", "broke"] = "broke"
        for variant in arms:
            if not variant:
                paired[0] = paired[0].add(rerunner.rerun(
                    (), seed, live=True, what="baseline (interleaved)").run)
                continue
            got = rerunner.rerun(removals, seed, what=f"confirm: {label}")
            if got.run == "changed":
                changed.append(got.answer)
                calls.append(got.calls)
            out = got.run
        return out

    def grown() -> Tally:
        p = paired[0]
        return Tally(changed=base.changed + p.changed, same=base.same + p.same,
                     broke=base.broke + p.broke)

    return (sequential(grown, one, seeds, alpha, words=rerunner.tier.words), tuple(changed),
            paired[0], calls[0] if calls else ())


def _findings(rerunner: Trial, base: Tally, found: Sequence[tuple[Removal, ...]],
              seeds: int, alpha: float, out: list[Finding], rng: random.Random,
              screen_seeds: int = 1) -> None:
    """Confirm each set found, appending to ``out`` (kept when the budget stops it); a
    confirmed set of three or more is then checked for minimality (:func:`_without`)."""
    for removals in found:
        test, answers, paired, calls = _confirm(rerunner, base, removals, seeds, alpha, rng)
        alone: tuple[tuple[Removal, Ablation], ...] = ()
        if len(removals) > 1 and test.verdict == "confirmed":
            alone = tuple((r, _confirm(rerunner, base, (r,), seeds, alpha, rng)[0])
                          for r in removals)
        elif len(removals) > 1:
            alone = tuple((r, _unheld(test)) for r in removals)
        out.append(Finding(removals=removals, test=test, answers=answers, alone=alone,
                           paired=paired, calls=calls))
        if len(removals) > 2 and test.verdict == "confirmed":
            out[-1] = replace(out[-1], without=_without(rerunner, removals, screen_seeds))


def _without(rerunner: Trial, removals: Sequence[Removal],
             screen_seeds: int) -> tuple[tuple[Removal, Tally], ...]:
    """Each member of a set in turn kept, the rest removed: the outcome held shows the
    member is needed in the set; changed, the set is not minimal (screen re-runs, like the
    search's own, on seeds of their own)."""
    out: list[tuple[Removal, Tally]] = []
    for i, member in enumerate(removals):
        rest = tuple(r for r in removals if r != member)
        tally = Tally()
        for k in range(screen_seeds):
            tally = tally.add(rerunner.rerun(rest, MINIMAL_SEED0 + 10 * i + k,
                                             what=f"minimal: all but {member.describe()}").run)
        out.append((member, tally))
    return tuple(out)


def _unheld(test: Ablation) -> Ablation:
    """A member of a set whose own test did not hold: not tested alone (gatekeeping).

    Testing each member only after its set is confirmed keeps the search's error rate at
    ``alpha``: without the gate, a set picked by one noisy screen gave every member a test
    of its own, more tests than the Bonferroni divisor paid for."""
    verdict: Verdict = "inconclusive" if test.verdict == "confirmed" else test.verdict
    return Ablation(tally=Tally(), p_value=1.0, verdict=verdict)


def screen_budget(untested: int, seeds: int, screen_seeds: int = 1) -> int:
    """The re-runs a search over ``untested`` removals takes at most when it finds one
    cause: a screen of each, the bisection's splits and one confirming test (each of its
    re-runs paired with a live baseline re-run); ``0`` when nothing is untested."""
    if not untested:
        return 0
    return screen_seeds * (untested + 1 + 2 * untested.bit_length()) + 2 * seeds


def plan_line(pieces: int, seeds: int, budget: int | None, words: Words) -> str:
    """What a search over ``pieces`` will spend, said before any re-run is made."""
    total = seeds + screen_budget(pieces, seeds)
    cap = f"; --budget {budget} caps it at {budget}" if budget is not None and budget < total \
        else ""
    return (f"plan: {seeds} baseline {words.trials} (up to {2 * seeds} if they vary), about "
            f"{total - seeds - 2 * seeds} screening {words.trials} over {pieces} pieces, and "
            f"up to {2 * seeds} confirming {words.trials} per cause found (half of them "
            f"interleaved baselines): about {total} {words.trials}{cap}")


def _confirm_cost(members: int, seeds: int) -> int:
    """A set's confirming test at most, each member's alone when it has several, and the
    set but each member when it has three or more (:func:`_without`, one seed each)."""
    return 2 * seeds * (1 + (members > 1) * members) + (members > 2) * members


def _enough(s: _Search, spent: int, isolated: Sequence[tuple[Removal, ...]], untested: int,
            seeds: int, pieces: int) -> int:
    """A ``--budget`` that lets the stopped search finish: what it spent, the confirming
    tests left, a screen of each untested piece (with the splits of a bisection) and a
    confirming test for each set it may still find (at most ``MAX_SETS`` in all, or one per
    untested piece screened alone); the search with the wanted answer may screen all of
    ``pieces`` once more (:meth:`_Search.run`)."""
    left = sum(_confirm_cost(len(f), seeds) for f in isolated)
    new_sets = min(untested, max(1, MAX_SETS - len(s.found))) if untested else 0
    splits = 0 if s.singling else 1 + 2 * untested.bit_length()
    screens = s.screen_seeds * (untested + splits) if untested else 0
    again = s.screen_seeds * (2 * pieces + 1) if s.wanted or s.needed else 0
    return spent + left + screens + again + 2 * seeds * new_sets


def search(rerunner: Trial, base: Tally, units: Sequence[Removal], *, seeds: int,
           alpha: float, order: str = "", wanted: bool = False) -> SearchResult:
    """Screen ``units`` by delta debugging, then confirm each set found (see module doc).

    ``order`` seeds the shuffle of the confirming re-runs (the run id: the same order
    every time the same run is explained). ``wanted``: a change is only the outcome the
    user asked for (``--expect``, ``--judge``, ``--label``), so removing every piece may
    also remove where that outcome comes from; when nothing else was found, each piece is
    then kept alone in turn (:meth:`_Search.sources`)."""
    findings: list[Finding] = []
    rng = random.Random(order)
    screen_seeds = 1 if base.changed == 0 else 3
    s = _Search(rerunner=rerunner, base=base, screen_seeds=screen_seeds,
                wanted=wanted, confirm=lambda removals: _findings(
                    rerunner, base, (removals,), seeds, alpha, findings, rng, screen_seeds))
    stopped: str | None = None
    try:
        s.run(units)
    except BudgetSpent as exc:
        stopped = str(exc)
    done = {r for f in findings for r in f.removals}
    isolated = tuple(f for f in s.found if not set(f) <= done)
    touched = s.cleared | s.broke | done | {r for f in isolated for r in f}
    untested = tuple(u for u in units if u not in touched)
    spent: dict[Removal, int] = {}
    for p in s.probes:
        for r in p.removed:
            spent[r] = spent.get(r, 0) + p.runs
    more = None if stopped is None else _enough(s, rerunner.runs, isolated, len(untested),
                                                 seeds, len(units))
    return SearchResult(findings=tuple(findings), probes=tuple(s.probes),
                        cleared=frozenset(s.cleared), broke=frozenset(s.broke),
                        untested=untested, stopped=stopped, isolated=isolated, spent=spent,
                        more=more)
