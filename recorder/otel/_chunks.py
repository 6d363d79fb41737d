"""A long run's export split across processes by iterations; each process sends its own spans.

An iteration's model and tool calls begin and end inside it, so a run cut
just after an ``iteration.end`` where no call is open maps to the same spans
in any number of pieces. Each piece is read, mapped and sent by its own
process (this one takes the first). What a piece leaves open — the root
span's attributes and span events, the usage totals, a call that never
ended — comes back as a :class:`TracePart` and is merged in run order here,
where the root is closed and sent last. The spans are those of the one-process
export (a test holds it to that); only the order of the requests differs.

Content capture stays in one process: a prompt names tool results read
earlier in the run, which another piece would not have.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SpanExporter

from footprint._errors import ConfigError
from recorder.otel._ids import _KIND, _ROOT
from recorder.otel._mapping import RunTrace, SpanRecord, TracePart
from recorder.otel._pump import Delivery, Options, Progress, pump
from recorder.otel._setup import otlp_exporter
from recorder.otel._spans import SpanFactory

if TYPE_CHECKING:
    from recorder.store._base import StoreView as Store

__all__ = ["MIN_EVENTS", "Piece", "Target", "export_split", "plan", "processes_for"]

MIN_EVENTS = 200_000
"""Below this many events one process exports: a worker's start (~1 s) costs more."""
MAX_PROCESSES = 8

_ROOT_TYPES = ", ".join(f"'{t}'" for t, kind in sorted(_KIND.items()) if kind == _ROOT)
_CUTS = f"""
SELECT seq, iteration FROM (
    SELECT seq, type, iteration, lead(type) OVER w AS next_type,
           lead(iteration) OVER w AS next_iteration,
           sum(CASE WHEN type IN ('llm.start', 'tool.start') THEN 1
                    WHEN type IN ('llm.end', 'tool.end') THEN -1 ELSE 0 END) OVER w AS open
    FROM _events_all WHERE run_id = ? WINDOW w AS (ORDER BY seq))
WHERE type = 'iteration.end' AND open = 0 AND next_iteration > 0
  AND next_iteration <> iteration AND next_type NOT IN ({_ROOT_TYPES})
ORDER BY seq
"""
_SHAPE = """
SELECT count(*), min(seq), max(seq), count(*) FILTER (type IN ('run.end', 'run.error')),
       max(seq) FILTER (type IN ('run.end', 'run.error'))
FROM _events_all WHERE run_id = ?
"""


@dataclass(frozen=True, slots=True)
class Piece:
    """Seqs ``first..last`` of the run; the chunk before ended iteration ``after``."""

    first: int
    last: int
    after: int


@dataclass(frozen=True, slots=True)
class Target:
    """Where a worker sends: its own OTLP exporter is built from these."""

    protocol: str
    endpoint: str | None
    timeout_s: float
    headers: tuple[tuple[str, str], ...]
    resource: tuple[tuple[tuple[str, Any], ...], str | None] = ((), None)
    """This process's resource (attributes, schema url): every piece names one
    service instance."""

    def exporter(self) -> SpanExporter:
        return otlp_exporter(self.protocol, self.endpoint, timeout_s=self.timeout_s,
                             headers=dict(self.headers))


def processes_for(events: int, asked: int | None) -> int:
    """How many processes export ``events`` events: ``asked``, else the usable cores
    (at most :data:`MAX_PROCESSES`) for a run of :data:`MIN_EVENTS` or more."""
    if asked is not None:
        if type(asked) is not int or asked < 1:
            raise ConfigError(f"processes={asked!r}: pass a positive int (1 exports in this "
                              "process), or None to use the cores for long runs")
        return asked
    if events < MIN_EVENTS:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_PROCESSES))


def plan(store: Store, run_id: str, parts: int) -> list[Piece]:
    """Up to ``parts`` pieces of about equal seq span, cut at clean iteration ends.

    One piece when the run cannot be cut safely: fewer than two clean cuts,
    or a run whose end is not its last event (events after ``run.end``).
    """
    if parts < 2:
        return []
    ((_n, first, last, ends, end_seq),) = store.rows(_SHAPE, [run_id])
    if first is None or ends > 1 or (ends == 1 and end_seq != last):
        return []
    cuts = store.rows(_CUTS, [run_id])
    chosen: list[tuple[int, int]] = []
    for j in range(1, parts):
        target = first + (last - first) * j // parts
        best = min(cuts, key=lambda c: abs(c[0] - target), default=None)
        if best is not None and (not chosen or best[0] > chosen[-1][0]) and best[0] < last:
            chosen.append((int(best[0]), int(best[1])))
    if not chosen:
        return []
    starts = [(int(first), -1)] + [(seq + 1, iteration) for seq, iteration in chosen]
    ends_at = [seq for seq, _ in chosen] + [int(last)]
    return [Piece(s, e, after) for (s, after), e in zip(starts, ends_at, strict=True)]


def _send_piece(store: Store, run_id: str, piece: Piece, options: Options,
                exporter: SpanExporter, progress: Progress | None
                ) -> tuple[Delivery, RunTrace]:
    from recorder.store._query import EventQuery
    from recorder.store._reader import StoreReader
    trace = RunTrace(run_id, content=options.content, content_limit=options.limit,
                     openinference=options.openinference, part=True, after_iteration=piece.after,
                     prices=options.prices)
    events = StoreReader(store).events(EventQuery(run_id=run_id,
                                                  seqs=(piece.first, piece.last)))
    factory = SpanFactory(options.resource or Resource.create())  # given in every piece
    fed = 0

    def ended() -> Iterator[tuple[str, list[SpanRecord]]]:
        nonlocal fed
        for event in events:
            fed += 1
            yield run_id, trace.feed(event)

    _, delivery = pump(ended(), factory, exporter, progress)
    if progress is not None:
        progress(fed)  # the whole piece, not only its last full batch
    return delivery, trace


_done: Any = None  # a worker's shared counters (one per piece), set by _start


def _start(counters: Any) -> None:
    from recorder.store._owned import tune_collector

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to act on
    quiet = logging.getLogger("opentelemetry.exporter")  # a refusal is counted, not logged
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    global _done
    _done = counters
    tune_collector()


def _work(root: str, run_id: str, piece: Piece, options: Options, target: Target,
          slot: int) -> tuple[Delivery, TracePart]:
    """A worker: read, map and send one piece; hand back what it left open."""
    from recorder.store._catalog import open_store

    def tick(n: int) -> None:
        _done[slot] = n

    attributes, schema_url = target.resource
    options = replace(options, resource=Resource(dict(attributes), schema_url))
    store = open_store(root)
    exporter = target.exporter()
    try:
        delivery, trace = _send_piece(store, run_id, piece, options, exporter, tick)
        return delivery, trace.part()
    finally:
        exporter.shutdown()
        store.close()


def export_split(store: Store, run_id: str, pieces: Sequence[Piece], options: Options,
                 target: Target, progress: Progress | None = None) -> Delivery:
    """Export the run in ``pieces`` (from :func:`plan`), one process each; the spans sent
    and lost, summed over every process."""
    resource = options.resource or Resource.create()
    options = replace(options, resource=resource)
    target = replace(target, resource=(tuple(resource.attributes.items()), resource.schema_url))
    context = multiprocessing.get_context("spawn")  # a fork would copy DuckDB's threads
    counters = context.Array("q", len(pieces), lock=False)
    tell: Callable[[], None] = (lambda: progress(sum(counters))) if progress else (lambda: None)

    def tick(n: int) -> None:
        counters[0] = n
        tell()

    with ProcessPoolExecutor(len(pieces) - 1, mp_context=context, initializer=_start,
                             initargs=(counters,)) as pool:
        shipped = replace(options, resource=None)  # a Resource holds a lock: sent as data
        futures = [pool.submit(_work, str(store.root), run_id, p, shipped, target, slot)
                   for slot, p in enumerate(pieces[1:], 1)]
        try:
            exporter = target.exporter()
            try:
                delivery, trace = _send_piece(store, run_id, pieces[0], options, exporter,
                                              tick)
                parts = _results(futures, tell)
                for done, _ in parts:
                    delivery.add(done)
                delivery.add(_finish(trace, [p for _, p in parts], options, exporter))
                return delivery
            finally:
                exporter.shutdown()
        except BaseException:  # a failure, or Ctrl-C: the other pieces are moot
            _stop(pool)
            raise


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the workers now rather than after their pieces."""
    workers: dict[int, Any] = getattr(pool, "_processes", None) or {}  # CPython: pid -> Process
    for process in list(workers.values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _results(futures: list[Future[tuple[Delivery, TracePart]]],
             tell: Callable[[], None]) -> list[tuple[Delivery, TracePart]]:
    """Each worker's outcome in piece order, the first failure raised as it was."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.25, return_when=FIRST_EXCEPTION)
        tell()
        for future in done:
            future.result()
    return [f.result() for f in futures]


def _finish(trace: RunTrace, parts: list[TracePart], options: Options,
            exporter: SpanExporter) -> Delivery:
    """Merge the later pieces' parts in order; close and send the root and what is open."""
    for part in parts:
        trace.merge(part)
    factory = SpanFactory(options.resource or Resource.create())  # set by export_split
    _, delivery = pump([(trace.run_id, trace.finish())], factory, exporter)
    return delivery
