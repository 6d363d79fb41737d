"""Backfill: replay a recorded run's spans to an OTLP endpoint, with the original timestamps.

The spans come from the same mapping and the same deterministic ids as the
live sink, so a backfilled run and a live-exported one are the same trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SpanExporter

from footprint._errors import RunError
from footprint.events import EventBase
from recorder.otel._chunks import Piece, Target, export_split, plan, processes_for
from recorder.otel._ids import trace_id_of
from recorder.otel._mapping import RunTrace, SpanRecord
from recorder.otel._pump import Options, Progress, pump
from recorder.otel._setup import capture_content_from_env
from recorder.otel._spans import SpanFactory
from recorder.store._prices import Prices, load_prices

if TYPE_CHECKING:
    from recorder.store._catalog import Store as StoreT

__all__ = ["BackfillResult", "export_events", "export_otlp"]



@dataclass(frozen=True, slots=True, kw_only=True)
class BackfillResult:
    """What a backfill sent: the run, its trace id (32 hex digits) and the span count."""

    run_id: str
    trace_id: str
    spans: int


def _records(events: Iterable[EventBase], content: bool, limit: int,
             openinference: bool = False, prices: Prices | None = None,
             ) -> Iterator[tuple[str, list[SpanRecord]]]:
    """``(run_id, spans ended)`` as the events stream by; the spans left open at the end."""
    trace: RunTrace | None = None
    for event in events:
        if trace is None:
            trace = RunTrace(event.run_id, content=content, content_limit=limit,
                             openinference=openinference, prices=prices)
        elif event.run_id != trace.run_id:
            raise RunError(
                f"export_events got events of several runs ({trace.run_id!r}, "
                f"{event.run_id!r}…); export one run at a time"
            )
        yield trace.run_id, trace.feed(event)
    if trace is not None and trace.root is not None:
        yield trace.run_id, trace.finish()


def _stream(events: Iterable[EventBase], exporter: SpanExporter, options: Options,
            progress: Progress | None = None) -> BackfillResult:
    """Map the events (one run, seq order) to spans and export them ``_BATCH`` at a time."""
    factory = SpanFactory(options.resource or Resource.create())
    fed = _records(events, options.content, options.limit, options.openinference,
                   options.prices)
    run_id, delivery = pump(fed, factory, exporter, progress)
    if run_id is None:
        raise RunError("export_events got no events; pass the events of one recorded run")
    delivery.check(run_id)
    return BackfillResult(run_id=run_id, trace_id=f"{trace_id_of(run_id):032x}",
                          spans=delivery.sent)


def _split(store: StoreT, run_id: str, options: Options,
           processes: int | None) -> list[Piece]:
    """The pieces to export in parallel, or ``[]`` for one process."""
    from recorder.store._reader import StoreReader

    if processes == 1 or options.content:
        return []
    events = StoreReader(store).summary(run_id).events if processes is None else 0
    return plan(store, run_id, processes_for(events, processes))


def export_events(events: Iterable[EventBase], exporter: SpanExporter, *,
                  capture_content: bool = False, content_limit: int = 16384,
                  resource: Resource | None = None,
                  openinference: bool = False) -> BackfillResult:
    """Map one run's events (in ``seq`` order) to spans and export them synchronously."""
    ordered = sorted(events, key=lambda e: e.seq)
    others = sorted({e.run_id for e in ordered} - {ordered[0].run_id}) if ordered else []
    if others:
        raise RunError(
            f"export_events got events of several runs ({ordered[0].run_id!r}, "
            f"{others[0]!r}…); export one run at a time"
        )
    return _stream(ordered, exporter, Options(content=capture_content, limit=content_limit,
                                               openinference=openinference,
                                               resource=resource))


def export_otlp(
    run: str,
    *,
    store: str | os.PathLike[str] | StoreT | None = None,
    endpoint: str | None = None,
    protocol: str = "http/protobuf",
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 10.0,
    capture_content: bool | None = None,
    exporter: SpanExporter | None = None,
    openinference: bool = False,
    progress: Progress | None = None,
    processes: int | None = 1,
) -> BackfillResult:
    """Re-export run ``run`` (full id, unique prefix or ``last``) from the store to OTLP.

    ``store`` is a store directory or an open :class:`recorder.Store` (left open).
    ``endpoint`` defaults to the ``OTEL_EXPORTER_OTLP_*`` variables (then
    ``http://localhost:4318``); ``exporter`` replaces the OTLP one entirely.
    The run streams from the store: memory stays bounded by a window of
    events and one batch of spans; ``progress(events_done)`` is called
    after each batch is sent. ``processes``: how many processes read, map and
    send pieces of the run (cut at iteration ends; the same spans); ``None``:
    the usable cores for a run of 200,000 events or more, else one (what
    ``footprint export-otlp`` does). Always one with content capture or a given
    ``exporter``. Default 1: worker processes start by importing the caller's
    main module, whose top-level code must then sit under
    ``if __name__ == "__main__":``.
    """
    if processes is not None:
        processes_for(0, processes)  # a bad count is refused before anything is read
    content = capture_content_from_env() if capture_content is None else capture_content
    target = Target(protocol, endpoint, timeout_s, tuple((headers or {}).items()))
    with _opened(store) as opened:
        options = Options(content=content, limit=16384, openinference=openinference,
                          resource=None, prices=load_prices(opened.root))
        return _export_from(opened, opened.resolve_run(run), options, target, exporter,
                            processes, progress)


@contextmanager
def _opened(store: str | os.PathLike[str] | StoreT | None) -> Iterator[StoreT]:
    """``store`` itself when it is an open store (left open), else the directory it names
    (or the default one) opened here and closed after."""
    from recorder.store._catalog import Store, open_store

    opened = store if isinstance(store, Store) else open_store(store)
    try:
        yield opened
    finally:
        if opened is not store:
            opened.close()


def _export_from(store: StoreT, run_id: str, options: Options, target: Target,
                 exporter: SpanExporter | None, processes: int | None,
                 progress: Progress | None) -> BackfillResult:
    """One run of an open store: in pieces across processes, or streamed here."""
    from recorder.store._query import EventQuery
    from recorder.store._reader import StoreReader

    split = _split(store, run_id, options, processes if exporter is None else 1)
    if split:
        delivery = export_split(store, run_id, split, options, target, progress)
        delivery.check(run_id)  # every lost span, of every process
        return BackfillResult(run_id=run_id, trace_id=f"{trace_id_of(run_id):032x}",
                              spans=delivery.sent)
    events = StoreReader(store).events(EventQuery(run_id=run_id))
    out = exporter or target.exporter()
    try:
        return _stream(events, out, options, progress)
    finally:
        if exporter is None:
            out.shutdown()
