"""Span records -> OpenTelemetry SDK ``ReadableSpan`` objects, with our deterministic ids.

Spans are built finished (explicit start/end times from the events) and
handed straight to a span processor's ``on_end``, the same object the SDK's
own tracer would hand it. Our attributes are valid OTel values by
construction, so the per-attribute validation of the tracer API is skipped.
Span ids come from an :class:`OTelIds` cache (the ones the stamp computed),
and the resource is a :class:`HashedResource`: the OTLP encoder hashes the
resource of every span it groups, and ``Resource.__hash__`` JSON-dumps its
attributes each time (~3.5 µs a span).
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from recorder.otel._ids import OTelIds
from recorder.otel._mapping import SpanRecord

__all__ = ["SCOPE", "HashedResource", "SpanFactory"]

SCOPE = InstrumentationScope("footprint", "0.1.0", "https://opentelemetry.io/schemas/1.37.0")
_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_OK = Status(StatusCode.UNSET)


class HashedResource(Resource):
    """A ``Resource`` equal to the one given, whose hash is computed once."""

    def __init__(self, resource: Resource) -> None:
        super().__init__(resource.attributes, resource.schema_url)
        self._hash = super().__hash__()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other)


class SpanFactory:
    """Builds ``ReadableSpan`` objects for one resource and instrumentation scope."""

    __slots__ = ("ids", "resource", "scope")

    def __init__(self, resource: Resource, scope: InstrumentationScope = SCOPE,
                 ids: OTelIds | None = None) -> None:
        self.resource = resource if isinstance(resource, HashedResource) else HashedResource(
            resource)
        self.scope = scope
        self.ids = OTelIds(cache_size=4) if ids is None else ids

    def build(self, run_id: str, records: Iterable[SpanRecord]) -> list[ReadableSpan]:
        trace = self.ids.trace_id(run_id)
        return [self.one(run_id, trace, r) for r in records]

    def one(self, run_id: str, trace_id: int, record: SpanRecord) -> ReadableSpan:
        span_id = self.ids.span_id
        context = SpanContext(trace_id, span_id(run_id, record.key), False, _SAMPLED)
        parent = None
        if record.parent_key is not None:
            parent = SpanContext(trace_id, span_id(run_id, record.parent_key), False, _SAMPLED)
        status = _OK if record.error is None else Status(StatusCode.ERROR, record.error)
        return ReadableSpan(
            name=record.name,
            context=context,
            parent=parent,
            resource=self.resource,
            attributes=record.attributes,
            events=tuple(Event(n, a, t) for n, t, a in record.events),
            kind=_KINDS[record.kind],
            status=status,
            start_time=record.start_ns,
            end_time=record.end_ns,
            instrumentation_scope=self.scope,
        )
