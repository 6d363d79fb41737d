"""OTLP protobuf (``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``) to the
neutral span model, through ``opentelemetry-proto``."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from recorder.ingest._make import maker
from recorder.ingest._spans import Batch, ForeignLog, ForeignSpan, SpanEvent, StatusCode

__all__ = ["BadPayload", "decode_logs", "decode_proto", "decode_traces"]

_STATUS: dict[int, StatusCode] = {0: "unset", 1: "ok", 2: "error"}
_foreign_span = maker(ForeignSpan)


class BadPayload(ValueError):
    """A body that is not the OTLP message it claims to be."""


def proto_value(value: Any) -> Any:
    """One protobuf ``AnyValue`` as plain Python."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [proto_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return proto_attributes(value.kvlist_value.values)
    return getattr(value, kind)


def proto_attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items:
        value = kv.value
        # a non-empty string (most attributes) is read here; every other value by proto_value
        text = value.string_value
        out[kv.key] = text if text else proto_value(value)
    return out


def _hex(raw: bytes, size: int) -> str | None:
    if len(raw) != size or raw.count(0) == size:  # wrong size, or all zero bytes
        return None
    return raw.hex()


def _span(raw: Any, resource: dict[str, Any], scope: str) -> ForeignSpan | None:
    trace_id, span_id = _hex(raw.trace_id, 16), _hex(raw.span_id, 8)
    if trace_id is None or span_id is None:
        return None
    status = raw.status
    return _foreign_span(
        trace_id=trace_id, span_id=span_id, name=raw.name, parent_id=_hex(raw.parent_span_id, 8),
        start_ns=raw.start_time_unix_nano, end_ns=raw.end_time_unix_nano,
        attributes=proto_attributes(raw.attributes),
        events=tuple(SpanEvent(name=e.name, time_ns=e.time_unix_nano,
                               attributes=proto_attributes(e.attributes)) for e in raw.events)
        if raw.events else (),
        status=_STATUS.get(status.code, "unset"), status_message=status.message,
        dropped_attributes=raw.dropped_attributes_count, resource=resource, scope=scope)


def decode_traces(body: bytes) -> Batch:
    """An ``ExportTraceServiceRequest`` body as a :class:`Batch` (:class:`BadPayload` if
    it does not parse)."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError, or worse
        raise BadPayload(f"not an OTLP trace request ({exc})") from None
    return traces_of(request)


def traces_of(request: ExportTraceServiceRequest) -> Batch:
    problems: Counter[str] = Counter()
    spans = []
    for res in request.resource_spans:
        resource = proto_attributes(res.resource.attributes)
        for sc in res.scope_spans:
            for raw in sc.spans:
                span = _span(raw, resource, sc.scope.name)
                if span is None:
                    problems["span without valid trace/span ids"] += 1
                else:
                    spans.append(span)
    return Batch(spans=tuple(spans), problems=dict(problems))


def decode_logs(body: bytes) -> Batch:
    """An ``ExportLogsServiceRequest`` body as a :class:`Batch`."""
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError, or worse
        raise BadPayload(f"not an OTLP logs request ({exc})") from None
    return logs_of(request)


def logs_of(request: ExportLogsServiceRequest) -> Batch:
    logs = []
    for res in request.resource_logs:
        for sc in res.scope_logs:
            for raw in sc.log_records:
                attrs = proto_attributes(raw.attributes)
                name = getattr(raw, "event_name", "") or attrs.get("event.name") or ""
                logs.append(ForeignLog(
                    event_name=str(name), trace_id=_hex(raw.trace_id, 16),
                    span_id=_hex(raw.span_id, 8),
                    time_ns=raw.time_unix_nano or raw.observed_time_unix_nano,
                    body=proto_value(raw.body), attributes=attrs))
    return Batch(logs=tuple(logs))


def decode_proto(body: bytes, signal: Literal["traces", "logs"]) -> Batch:
    return decode_traces(body) if signal == "traces" else decode_logs(body)
