"""A run's outline: its iterations with their seq ranges, counts per type, tokens, status.

Read from the store's per-file outlines (``recorder.store._outline``): the
timeline's table of contents without reading a single event. Iterations
stay columnar (an Arrow table, sorted by first seq): a run of 100,000
iterations costs one small table, not 100,000 objects.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import pyarrow as pa

from recorder.store._outline import outline_view

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["ITERATION_SCHEMA", "IterationSpan", "RunSummary", "run_bounds", "run_summary"]

ITERATION_SCHEMA = pa.schema([
    pa.field("iteration", pa.int64()), pa.field("first_seq", pa.int64()),
    pa.field("last_seq", pa.int64()), pa.field("events", pa.int64()),
    pa.field("turn", pa.int64()),
])
"""One row per iteration of :attr:`RunSummary.iterations`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationSpan:
    """One iteration of a run: its seq range (inclusive), event count and turn."""

    iteration: int
    first_seq: int
    last_seq: int
    events: int
    turn: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """The outline of one run (``events == 0``: the store has no row of it).

    ``iterations`` is an Arrow table (:data:`ITERATION_SCHEMA`) sorted by
    ``first_seq``; :meth:`span` and :meth:`iteration_of` read single rows.
    """

    run_id: str
    events: int
    first_seq: int
    last_seq: int
    start_ns: int | None
    end_ns: int | None
    iterations: pa.Table
    type_counts: Mapping[str, int]
    input_tokens: int
    output_tokens: int
    _starts: list[int] = field(default_factory=list, repr=False, compare=False)

    @property
    def status(self) -> str:
        """``complete`` (a ``run.end``), ``failed`` (a ``run.error``) or ``incomplete``."""
        if self.type_counts.get("run.end"):
            return "complete"
        return "failed" if self.type_counts.get("run.error") else "incomplete"

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def span(self, index: int) -> IterationSpan:
        """The ``index``-th iteration in seq order (``IndexError`` past the end)."""
        if not -self.iterations.num_rows <= index < self.iterations.num_rows:
            raise IndexError(f"iteration index {index} of {self.iterations.num_rows}")
        row = self.iterations.slice(index % self.iterations.num_rows, 1).to_pylist()[0]
        return IterationSpan(**row)

    def iteration_of(self, seq: int) -> IterationSpan | None:
        """The iteration whose seq range holds ``seq`` (the latest one starting at or before)."""
        if not self._starts and self.iterations.num_rows:
            self._starts.extend(self.iterations.column("first_seq").to_pylist())
        at = bisect.bisect_right(self._starts, seq) - 1
        if at < 0:
            return None
        found = self.span(at)
        return found if found.last_seq >= seq else None


_ITERATIONS = """
SELECT iteration, min(first_seq) AS first_seq, max(last_seq) AS last_seq,
       sum(events)::BIGINT AS events, min(turn) AS turn FROM {view}
WHERE level = 'iteration' AND run_id = ? GROUP BY iteration ORDER BY first_seq, iteration
"""
_TYPES = """
SELECT type, sum(events) FROM {view} WHERE level = 'type' AND run_id = ? GROUP BY type
"""
_RUN = """
SELECT sum(events), min(first_seq), max(last_seq), min(start_ns), max(end_ns),
       coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)
FROM {view} WHERE level = 'run' AND run_id = ?
"""


def run_bounds(store: StoreView, run_id: str) -> tuple[int, int, int]:
    """``(events, first_seq, last_seq)`` of the run (``(0, 0, 0)`` when it has no row)."""
    n, first, last = store.rows(_RUN.format(view=outline_view(store)), [run_id])[0][:3]
    return int(n or 0), int(first or 0), int(last or 0)


def run_summary(store: StoreView, run_id: str) -> RunSummary:
    """``run_id``'s outline from the store's per-file outlines (no event is read)."""
    view = outline_view(store)
    spans = store.arrow(_ITERATIONS.format(view=view), [run_id]).cast(ITERATION_SCHEMA)
    counts = dict(sorted((str(t), int(n)) for t, n in
                         store.rows(_TYPES.format(view=view), [run_id])))
    n, first, last, start, end, tin, tout = store.rows(_RUN.format(view=view), [run_id])[0]
    return RunSummary(
        run_id=run_id, events=int(n or 0), first_seq=int(first or 0), last_seq=int(last or 0),
        start_ns=start, end_ns=end, iterations=spans,
        type_counts=MappingProxyType(counts), input_tokens=int(tin), output_tokens=int(tout))
