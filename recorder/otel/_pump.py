"""Sending a run's spans: the export's options and the pump that builds and sends them.

Shared by the one-process export (``_backfill``) and the split export's
workers (``_chunks``), which both import it; neither imports the other back
but ``_backfill`` choosing the split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from footprint._errors import RunError
from recorder.otel._mapping import SpanRecord
from recorder.otel._spans import SpanFactory
from recorder.store._prices import Prices

__all__ = ["Options", "Progress", "pump"]

_BATCH = 512
Progress = Callable[[int], None]
"""Called with the number of events mapped so far."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """How a run is exported: content capture and its limit, OpenInference, the resource."""

    content: bool
    limit: int
    openinference: bool
    resource: Resource | None
    prices: Prices | None = None
    """The store's prices (its ``prices.json`` over ``genai-prices``); ``None``: the latter."""


def pump(ended: Iterable[tuple[str, list[SpanRecord]]], factory: SpanFactory,
         exporter: SpanExporter, progress: Progress | None = None) -> tuple[str | None, int]:
    """Build and send the spans ``(run id, spans ended)`` hand over, ``_BATCH`` at a time;
    ``progress(n)`` after each batch, ``n`` the pairs taken so far (one per event)."""
    pending: list[ReadableSpan] = []
    sent = 0
    run_id: str | None = None
    for done, (run_id, spans) in enumerate(ended, 1):
        pending.extend(factory.build(run_id, spans))
        if len(pending) >= _BATCH:
            sent += _send(exporter, pending, run_id)
            pending = []
            if progress is not None:
                progress(done)
    if run_id is not None:
        sent += _send(exporter, pending, run_id)
    return run_id, sent


def _send(exporter: SpanExporter, spans: list[ReadableSpan], run_id: str) -> int:
    if spans and exporter.export(spans) is not SpanExportResult.SUCCESS:
        raise RunError(
            f"the OTLP endpoint refused or did not take {len(spans)} spans of run "
            f"{run_id!r}; check --endpoint and that a collector listens there, then retry"
        )
    return len(spans)
