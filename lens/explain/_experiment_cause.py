"""Why an item regressed: the first divergent decision, and the piece that caused it.

For a regressed item, A's run and B's run (the first pair where A passed and B
did not) are diffed on their decisions (:func:`lens.playback._diff.diff_runs`):
the first decision where B left A is named. Then the pieces B's configuration
has that A's has not, or has with other content (``injection.declared``: id and
content hash), are each removed from B in turn (``Agent.without(id)``) and the
item re-run once (offline of the store: nothing is recorded); a piece whose
removal gives A's verdict back is named as the cause. A piece A has and B lacks
cannot be removed from B: it is named in the note, not tried. A piece both have with
other content is also tried with A's version in B's place (agents without a graph).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from footprint.events import Event, InjectionDeclared, ListSink, RunStart
from lens.explain._experiment_compare import Comparison, ItemComparison
from lens.explain._experiment_run import Scoring, checkpoint_of, score_answer
from lens.playback._diff import diff_runs
from lens.playback._stream import clip
from recorder._datasets import DatasetItem

__all__ = ["explain_regressions", "first_divergence", "pieces_of"]

Candidate = Callable[[], Any]
"""Builds B's agent afresh (``None`` where it cannot be rebuilt)."""


def pieces_of(events: Sequence[Event]) -> dict[str, str]:
    """``injection id -> content hash`` of a run's declared injections."""
    return {e.injection_id: e.content_hash for e in events if isinstance(e, InjectionDeclared)}


def _unlabelled(events: Sequence[Event]) -> list[Event]:
    """The run's events with its labels (tags, metadata, release…) blanked: two experiments
    label their runs apart, which is no decision."""
    return [dataclasses.replace(e, tags=(), metadata={}, user_id=None, session_id=None,
                                release=None, environment=None, conversation_id=None)
            if isinstance(e, RunStart) else e for e in events]


def first_divergence(a: Sequence[Event], b: Sequence[Event]) -> str | None:
    """The first decision where run ``b`` left run ``a``, in one line (``None``: none);
    the runs' labels are not compared."""
    d = diff_runs(_unlabelled(a), _unlabelled(b))
    if d.first is not None:
        f = d.first
        return (f"iteration {f.iteration} {f.step}: A {clip(f.expected, 70)} | "
                f"B {clip(f.got, 70)}")
    if d.config:
        return f"configuration: {clip(d.config[0], 120)}"
    return None


def _verdict(agent: Any, item: DatasetItem, scoring: Scoring) -> str:
    try:
        answer = agent.run_sync(item.message,
                                continue_from=checkpoint_of(item, f"cause/{item.item_id}")
                                ).answer
    except Exception:  # the re-run failed: its verdict is the failure's
        answer = None
    return score_answer(scoring, item, answer)[0]


def _swapped(b: Any, a: Any, pid: str) -> Any | None:
    """B with A's version of piece ``pid`` in its place (``None``: not possible: A lacks
    it, or either agent has a graph, whose injections are not all B's own options)."""
    if a is None or a.setup.graph is not None or b.setup.graph is not None:
        return None
    theirs = next((i for i in a.setup.injections if i.id == pid), None)
    if theirs is None:
        return None
    mine = tuple(theirs if i.id == pid else i for i in b.setup.injections)
    return b.variant(injections=mine, sink=ListSink())


def _restores(ic: ItemComparison, pid: str, item: DatasetItem, b: Any, a: Any,
              scoring: Scoring) -> str | None:
    """How changing ``pid`` in B gives A's verdict back (removing it, else putting A's
    version in its place), or ``None``."""
    if _verdict(b.without(pid, sink=ListSink()), item, scoring) == ic.a_verdict:
        return f"removing {pid!r} from B"
    swapped = _swapped(b, a, pid)
    if swapped is not None and _verdict(swapped, item, scoring) == ic.a_verdict:
        return f"putting A's version of {pid!r} into B"
    return None


def _search(ic: ItemComparison, differing: list[str], item: DatasetItem,
            builds: tuple[Candidate, Candidate | None], scoring: Scoring) -> tuple[str | None, str]:
    b, a = builds[0](), None if builds[1] is None else builds[1]()
    found = {pid: how for pid in differing
             if (how := _restores(ic, pid, item, b, a, scoring)) is not None}
    tried = ", ".join(differing)
    if len(found) == 1:
        pid, how = next(iter(found.items()))
        return pid, f"{how} gives A's verdict {clip(ic.a_verdict, 40)!r} back (tried: {tried})"
    if found:
        return None, (f"changing any one of {', '.join(found)} gives A's verdict back: "
                      "no single cause")
    return None, f"changing none of {tried} alone gives A's verdict back"


def _explain(store: Any, ic: ItemComparison, item: DatasetItem | None,
             builds: tuple[Candidate | None, Candidate | None], scoring: Scoring | None,
             why_not: str) -> ItemComparison:
    if ic.a_run is None or ic.b_run is None:
        return dataclasses.replace(ic, cause_note="unknown: a run of the pair never started")
    a_events, b_events = store.events(ic.a_run), store.events(ic.b_run)
    pa, pb = pieces_of(a_events), pieces_of(b_events)
    differing = [pid for pid in pb if pa.get(pid) != pb[pid]]
    lost = [pid for pid in pa if pid not in pb]
    cause: str | None = None
    if not differing:
        note = "no removable piece differs between A and B"
    elif builds[0] is None or scoring is None or item is None:
        note = f"unknown: {why_not or 'the item is not in the dataset'}"
    else:
        cause, note = _search(ic, differing, item, (builds[0], builds[1]), scoring)
    if lost:
        note += f"; B lacks {', '.join(lost)} (not tried: it cannot be removed from B)"
    return dataclasses.replace(ic, divergence=first_divergence(a_events, b_events),
                               cause=cause, cause_note=note)


def explain_regressions(store: Any, comparison: Comparison, items: Mapping[str, DatasetItem],
                        builds: tuple[Candidate | None, Candidate | None],
                        scoring: Scoring | None, why_not: str = "") -> Comparison:
    """``comparison`` with every regressed item explained (``builds``: B's agent and A's;
    B's ``None`` with ``why_not`` when it cannot be rebuilt, A's ``None``: only removals
    are tried)."""
    explained = tuple(
        _explain(store, ic, items.get(ic.item_id), builds, scoring, why_not)
        if ic.change == "regressed" else ic for ic in comparison.items)
    return dataclasses.replace(comparison, items=explained)
