"""OTLP/JSON to the neutral span model, by hand.

``google.protobuf.json_format`` is not used on purpose: OTLP/JSON writes trace
and span ids as hex strings while protobuf's JSON mapping reads ``bytes`` as
base64, so it silently corrupts every id. Integers may arrive as JSON numbers
or strings (64-bit values are strings in OTLP/JSON); both are read.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Mapping
from typing import Any

from recorder.ingest._spans import Batch, ForeignLog, ForeignSpan, SpanEvent, StatusCode

__all__ = ["decode_json", "json_value"]

_STATUS: dict[int, StatusCode] = {0: "unset", 1: "ok", 2: "error"}


def json_value(value: Any) -> Any:
    """One OTLP ``AnyValue`` object as plain Python (``None`` when empty)."""
    if not isinstance(value, Mapping):
        return None
    for key, read in _READERS.items():
        if key in value:
            return read(value[key])
    return None


def _ints(raw: Any) -> int:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


def _array(raw: Any) -> list[Any]:
    items = raw.get("values", []) if isinstance(raw, Mapping) else []
    return [json_value(v) for v in items] if isinstance(items, list) else []


def _kvlist(raw: Any) -> dict[str, Any]:
    items = raw.get("values", []) if isinstance(raw, Mapping) else []
    return attributes(items)


def _bytes(raw: Any) -> bytes:
    try:
        return base64.b64decode(str(raw))
    except ValueError:
        return b""


_READERS: dict[str, Any] = {
    "stringValue": str, "boolValue": bool, "intValue": _ints,
    "doubleValue": lambda raw: float(raw), "arrayValue": _array,
    "kvlistValue": _kvlist, "bytesValue": _bytes,
}


def attributes(items: Any) -> dict[str, Any]:
    """An OTLP ``KeyValue`` list as a dict (items without a string key are skipped)."""
    out: dict[str, Any] = {}
    if not isinstance(items, list):
        return out
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = json_value(item.get("value"))
    return out


def _hex_id(raw: Any, size: int) -> str | None:
    """An id as lowercase hex: OTLP/JSON writes hex; an id in base64 (protobuf's own JSON
    mapping, which some tools write) is read too — its length tells it apart (24 or 12
    characters for 16 or 8 bytes, against 32 or 16 hex digits)."""
    if not isinstance(raw, str) or not raw:
        return None
    text = raw.lower()
    if len(text) == size * 2 and all(c in "0123456789abcdef" for c in text):
        return None if text == "0" * (size * 2) else text
    if len(raw) == 4 * -(-size // 3):
        try:
            data = base64.b64decode(raw, validate=True)
        except ValueError:
            return None
        return data.hex() if len(data) == size and any(data) else None
    return None


def _events(raw: Any) -> tuple[SpanEvent, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(SpanEvent(name=str(e.get("name", "")), time_ns=_ints(e.get("timeUnixNano")),
                           attributes=attributes(e.get("attributes")))
                 for e in raw if isinstance(e, Mapping))


def _span(raw: Mapping[str, Any], resource: dict[str, Any], scope: str) -> ForeignSpan | None:
    trace_id, span_id = _hex_id(raw.get("traceId"), 16), _hex_id(raw.get("spanId"), 8)
    if trace_id is None or span_id is None:
        return None
    status = raw.get("status") if isinstance(raw.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    return ForeignSpan(
        trace_id=trace_id, span_id=span_id, name=str(raw.get("name", "")),
        parent_id=_hex_id(raw.get("parentSpanId"), 8),
        start_ns=_ints(raw.get("startTimeUnixNano")), end_ns=_ints(raw.get("endTimeUnixNano")),
        attributes=attributes(raw.get("attributes")), events=_events(raw.get("events")),
        status=_STATUS.get(_ints(status.get("code")), "unset"),
        status_message=str(status.get("message", "")),
        dropped_attributes=_ints(raw.get("droppedAttributesCount")),
        resource=resource, scope=scope)


def _log(raw: Mapping[str, Any]) -> ForeignLog:
    attrs = attributes(raw.get("attributes"))
    name = raw.get("eventName") or attrs.get("event.name") or ""
    return ForeignLog(event_name=str(name), trace_id=_hex_id(raw.get("traceId"), 16),
                      span_id=_hex_id(raw.get("spanId"), 8),
                      time_ns=_ints(raw.get("timeUnixNano") or raw.get("observedTimeUnixNano")),
                      body=json_value(raw.get("body")), attributes=attrs)


def _groups(doc: Mapping[str, Any], outer: str, inner: str,
            items: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
    found = []
    for res in doc.get(outer) or []:
        if not isinstance(res, Mapping):
            continue
        resource = res.get("resource") if isinstance(res.get("resource"), Mapping) else {}
        assert isinstance(resource, Mapping)
        attrs = attributes(resource.get("attributes"))
        for sc in res.get(inner) or []:
            if not isinstance(sc, Mapping):
                continue
            scope = sc.get("scope") if isinstance(sc.get("scope"), Mapping) else {}
            assert isinstance(scope, Mapping)
            listed = sc.get(items)
            found.append((attrs, str(scope.get("name", "")),
                          listed if isinstance(listed, list) else []))
    return found


def decode_json(doc: Any) -> Batch:
    """One OTLP/JSON export request (traces or logs) as a :class:`Batch`."""
    problems: Counter[str] = Counter()
    if not isinstance(doc, Mapping):
        problems["not an OTLP/JSON object"] += 1
        return Batch(problems=dict(problems))
    spans: list[ForeignSpan] = []
    for resource, scope, raws in _groups(doc, "resourceSpans", "scopeSpans", "spans"):
        for raw in raws:
            span = _span(raw, resource, scope) if isinstance(raw, Mapping) else None
            if span is None:
                problems["span without valid trace/span ids"] += 1
            else:
                spans.append(span)
    logs = [_log(raw) for _, _, raws in _groups(doc, "resourceLogs", "scopeLogs", "logRecords")
            for raw in raws if isinstance(raw, Mapping)]
    if "resourceSpans" not in doc and "resourceLogs" not in doc:
        problems["neither resourceSpans nor resourceLogs"] += 1
    return Batch(spans=tuple(spans), logs=tuple(logs), problems=dict(problems))
