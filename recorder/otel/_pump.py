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

__all__ = ["GIVE_UP", "Delivery", "Options", "Progress", "pump"]

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


GIVE_UP = 3
"""Refused batches in a row after which a process stops sending: the rest are still mapped,
and counted lost, so the count is every span not delivered."""


@dataclass(slots=True)
class Delivery:
    """What one process sent and lost (refused, not taken, or never tried after
    :data:`GIVE_UP` refusals in a row); summed across the processes of a split export."""

    sent: int = 0
    lost: int = 0
    refused_in_a_row: int = 0

    def send(self, exporter: SpanExporter, spans: list[ReadableSpan]) -> None:
        if not spans:
            return
        if self.refused_in_a_row >= GIVE_UP:
            self.lost += len(spans)
        elif exporter.export(spans) is SpanExportResult.SUCCESS:
            self.sent += len(spans)
            self.refused_in_a_row = 0
        else:
            self.lost += len(spans)
            self.refused_in_a_row += 1

    def add(self, other: Delivery) -> None:
        self.sent += other.sent
        self.lost += other.lost

    def check(self, run_id: str) -> None:
        """Raise when any span was lost, with the count across every process."""
        if self.lost:
            raise RunError(
                f"the OTLP endpoint refused or did not take {self.lost} of "
                f"{self.sent + self.lost} spans of run {run_id!r} ({self.sent} sent); check "
                "--endpoint and that a collector listens there, then retry")


def pump(ended: Iterable[tuple[str, list[SpanRecord]]], factory: SpanFactory,
         exporter: SpanExporter, progress: Progress | None = None
         ) -> tuple[str | None, Delivery]:
    """Build and send the spans ``(run id, spans ended)`` hand over, ``_BATCH`` at a time;
    ``progress(n)`` after each batch, ``n`` the pairs taken so far (one per event). A
    refused batch is counted lost and the next one sent (:class:`Delivery`)."""
    pending: list[ReadableSpan] = []
    delivery = Delivery()
    run_id: str | None = None
    for done, (run_id, spans) in enumerate(ended, 1):
        pending.extend(factory.build(run_id, spans))
        if len(pending) >= _BATCH:
            delivery.send(exporter, pending)
            pending = []
            if progress is not None:
                progress(done)
    if run_id is not None:
        delivery.send(exporter, pending)
    return run_id, delivery
