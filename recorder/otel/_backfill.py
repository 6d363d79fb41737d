"""Backfill: replay a recorded run's spans to an OTLP endpoint, with the original timestamps.

The spans come from the same mapping and the same deterministic ids as the
live sink, so a backfilled run and a live-exported one are the same trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from footprint._errors import RunError
from footprint.events import EventBase
from recorder.otel._ids import trace_id_of
from recorder.otel._mapping import RunTrace, SpanRecord
from recorder.otel._setup import capture_content_from_env, otlp_exporter
from recorder.otel._spans import SpanFactory

__all__ = ["BackfillResult", "export_events", "export_otlp"]

_BATCH = 512


@dataclass(frozen=True, slots=True, kw_only=True)
class BackfillResult:
    """What a backfill sent: the run, its trace id (32 hex digits) and the span count."""

    run_id: str
    trace_id: str
    spans: int


def _records(events: Iterable[EventBase], content: bool, limit: int,
             openinference: bool = False) -> list[SpanRecord]:
    trace: RunTrace | None = None
    records: list[SpanRecord] = []
    for event in events:
        if trace is None:
            trace = RunTrace(event.run_id, content=content, content_limit=limit,
                             openinference=openinference)
        records.extend(trace.feed(event))
    if trace is not None and trace.root is not None:
        trace.root.attributes["footprint.incomplete"] = True
        records.extend(trace.close())
    return records


def export_events(events: Iterable[EventBase], exporter: SpanExporter, *,
                  capture_content: bool = False, content_limit: int = 16384,
                  resource: Resource | None = None,
                  openinference: bool = False) -> BackfillResult:
    """Map one run's events (in ``seq`` order) to spans and export them synchronously."""
    ordered = sorted(events, key=lambda e: e.seq)
    if not ordered:
        raise RunError("export_events got no events; pass the events of one recorded run")
    run_id = ordered[0].run_id
    others = sorted({e.run_id for e in ordered} - {run_id})
    if others:
        raise RunError(
            f"export_events got events of several runs ({run_id!r}, {others[0]!r}…); "
            "export one run at a time"
        )
    records = _records(ordered, capture_content, content_limit, openinference)
    spans = SpanFactory(resource or Resource.create()).build(run_id, records)
    for start in range(0, len(spans), _BATCH):
        result = exporter.export(spans[start : start + _BATCH])
        if result is not SpanExportResult.SUCCESS:
            raise RunError(
                f"the OTLP endpoint refused or did not take {len(spans)} spans of run "
                f"{run_id!r}; check --endpoint and that a collector listens there, then retry"
            )
    return BackfillResult(run_id=run_id, trace_id=f"{trace_id_of(run_id):032x}",
                          spans=len(spans))


def export_otlp(
    run: str,
    *,
    store: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    protocol: str = "http/protobuf",
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 10.0,
    capture_content: bool | None = None,
    exporter: SpanExporter | None = None,
    openinference: bool = False,
) -> BackfillResult:
    """Re-export run ``run`` (full id, unique prefix or ``last``) from the store to OTLP.

    ``endpoint`` defaults to the ``OTEL_EXPORTER_OTLP_*`` variables (then
    ``http://localhost:4318``); ``exporter`` replaces the OTLP one entirely.
    """
    from recorder._catalog import open_store

    with open_store(store) as opened:
        run_id = opened.resolve_run(run)
        events = opened.events(run_id)
    out = exporter or otlp_exporter(protocol, endpoint, timeout_s=timeout_s, headers=headers)
    content = capture_content_from_env() if capture_content is None else capture_content
    try:
        return export_events(events, out, capture_content=content, openinference=openinference)
    finally:
        if exporter is None:
            out.shutdown()
