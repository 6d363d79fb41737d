"""OTLP trace requests written straight to protobuf wire bytes, about four times cheaper.

The SDK's encoder builds two or three protobuf objects per attribute and
copies each into its parent (~2.2 µs an attribute, ~7 µs a bare span).
:func:`encode_request` writes the same ``ExportTraceServiceRequest`` as
bytes: field tags are constants, attribute keys are encoded once
(interned), and a whole ``KeyValue`` whose key and value were seen before
(``gen_ai.operation.name=chat``, a model name, a slot) is one dict lookup.
The bytes parse to a message equal to the SDK's ``encode_spans(spans)``
(a property test holds it to that). Anything this writer does not cover
(links, bytes or mapping values, integers beyond int64) raises
:class:`Unsupported`, and callers fall back to the SDK encoder.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["Unsupported", "WireEncoder"]

_FIXED64 = struct.Struct("<Q").pack
_DOUBLE = struct.Struct("<d").pack
_FIXED32 = struct.Struct("<I").pack
_SMALL = [bytes((n,)) for n in range(128)]
_INT64 = (-(1 << 63), (1 << 63) - 1)
_MASK64 = (1 << 64) - 1
_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200  # SpanFlags: the SDK always sets the first
_MAX_CACHED = 512  # cached KeyValue encodings before the cache starts over (memory stays flat)
_EMPTY_STATUS = b"\x7a\x00"


class Unsupported(Exception):
    """A span holds something this writer does not encode; use the SDK encoder instead."""


def varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    return tag + varint(len(payload)) + payload


def _scalar(value: object) -> bytes:
    """An ``AnyValue`` body for one non-sequence attribute value (exact types only)."""
    if type(value) is str:
        return _field(b"\x0a", value.encode("utf-8"))
    if type(value) is bool:
        return b"\x10\x01" if value else b"\x10\x00"
    if type(value) is int:
        if not _INT64[0] <= value <= _INT64[1]:
            raise Unsupported(f"integer {value!r} does not fit int64")
        return b"\x18" + varint(value & _MASK64)
    if type(value) is float:
        return b"\x21" + _DOUBLE(value)
    raise Unsupported(f"attribute value of type {type(value).__name__}")


def _any_value(value: object) -> bytes:
    if type(value) is tuple or type(value) is list:
        items = b"".join([_field(b"\x0a", _scalar(v)) for v in value])
        return _field(b"\x2a", items)
    return _scalar(value)


class WireEncoder:
    """Encodes batches of ``ReadableSpan`` to OTLP bytes, with its own key and value caches.

    One encoder per exporting thread: the caches are plain dicts.
    """

    __slots__ = ("_keys", "_pairs", "_resources", "_scopes")

    def __init__(self) -> None:
        self._keys: dict[str, bytes] = {}
        self._pairs: dict[tuple[str, type, object], bytes] = {}
        self._resources: dict[object, bytes] = {}
        self._scopes: dict[object, bytes] = {}

    # -- attributes -------------------------------------------------------------------
    def _key_value(self, key: str, value: object) -> bytes:
        """One ``KeyValue`` (without its outer tag); scalars are cached whole."""
        kind = type(value)
        cacheable = kind is not tuple and kind is not list
        if cacheable:
            hit = self._pairs.get((key, kind, value))
            if hit is not None:
                return hit
        head = self._keys.get(key)
        if head is None:
            head = self._keys[key] = _text(b"\x0a", key)
        body = head + _field(b"\x12", _any_value(value))
        if cacheable:
            if len(self._pairs) >= _MAX_CACHED:
                self._pairs.clear()
            self._pairs[(key, kind, value)] = body
        return body

    def _attributes(self, tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
        if not attributes:
            return b""
        kv = self._key_value
        return b"".join([_field(tag, kv(k, v)) for k, v in attributes.items()])

    # -- spans --------------------------------------------------------------------------
    def _event(self, event: Any) -> bytes:
        body = _time(b"\x09", event.timestamp) + _text(b"\x12", event.name)
        body += self._attributes(b"\x1a", event.attributes)
        dropped = event.dropped_attributes
        return _field(b"\x5a", body + (b"\x20" + varint(dropped) if dropped else b""))

    def span(self, span: ReadableSpan) -> bytes:
        """One ``Span`` message body."""
        ctx, parent = span.context, span.parent
        if ctx is None or span.links:
            raise Unsupported("a span without a context, or with links")
        parts = [b"\x0a\x10", ctx.trace_id.to_bytes(16, "big"), b"\x12\x08",
                 ctx.span_id.to_bytes(8, "big")]
        if ctx.trace_state:
            state = ",".join(f"{k}={v}" for k, v in ctx.trace_state.items())
            parts.append(_field(b"\x1a", state.encode("utf-8")))
        if parent is not None:
            parts += (b"\x22\x08", parent.span_id.to_bytes(8, "big"))
        parts += (_text(b"\x2a", span.name), b"\x30", _SMALL[span.kind.value + 1],
                  _time(b"\x39", span.start_time), _time(b"\x41", span.end_time),
                  self._attributes(b"\x4a", span.attributes))
        if span.dropped_attributes:
            parts.append(b"\x50" + varint(span.dropped_attributes))
        parts += [self._event(e) for e in span.events]
        if span.dropped_events:
            parts.append(b"\x60" + varint(span.dropped_events))
        parts += (self._status(span), b"\x85\x01", _FIXED32(_flags(parent)))
        return b"".join(parts)

    @staticmethod
    def _status(span: ReadableSpan) -> bytes:
        status = span.status
        if status is None:
            return b""
        code, message = status.status_code.value, status.description
        if not code and not message:
            return _EMPTY_STATUS
        body = _field(b"\x12", message.encode("utf-8")) if message else b""
        return _field(b"\x7a", body + (b"\x18" + _SMALL[code] if code else b""))

    # -- the request ----------------------------------------------------------------------
    def encode_request(self, spans: Sequence[ReadableSpan]) -> bytes:
        """The serialized ``ExportTraceServiceRequest`` of ``spans`` (grouped as the SDK does)."""
        groups: dict[Any, dict[Any, list[bytes]]] = {}
        for span in spans:
            try:
                body = _field(b"\x12", self.span(span))
            except (struct.error, OverflowError, AttributeError, TypeError) as error:
                raise Unsupported(f"span {span.name!r}: {error}") from error
            by_scope = groups.get(span.resource)
            if by_scope is None:
                by_scope = groups[span.resource] = {}
            by_scope.setdefault(span.instrumentation_scope or None, []).append(body)
        out = []
        for resource, by_scope in groups.items():
            scopes = b"".join(_field(b"\x12", self._scope(scope) + b"".join(bodies)
                                     + _text(b"\x1a", getattr(scope, "schema_url", None)))
                              for scope, bodies in by_scope.items())
            out.append(_field(b"\x0a", self._resource(resource) + scopes
                              + _text(b"\x1a", resource.schema_url)))
        return b"".join(out)

    def _resource(self, resource: Any) -> bytes:
        hit = self._resources.get(resource)
        if hit is None:
            if len(self._resources) >= 64:
                self._resources.clear()
            hit = _field(b"\x0a", self._attributes(b"\x0a", resource.attributes))
            self._resources[resource] = hit
        return hit

    def _scope(self, scope: Any) -> bytes:
        hit = self._scopes.get(scope)
        if hit is None:
            if len(self._scopes) >= 64:
                self._scopes.clear()
            body = b""
            if scope is not None:
                body = (_text(b"\x0a", scope.name) + _text(b"\x12", scope.version)
                        + self._attributes(b"\x1a", scope.attributes))
            hit = self._scopes[scope] = _field(b"\x0a", body)
        return hit


def _text(tag: bytes, text: str | None) -> bytes:
    return _field(tag, text.encode("utf-8")) if text else b""


def _time(tag: bytes, ns: int | None) -> bytes:
    return tag + _FIXED64(ns) if ns else b""


def _flags(parent: Any) -> int:
    if parent is not None and parent.is_remote:
        return _HAS_IS_REMOTE | _IS_REMOTE
    return _HAS_IS_REMOTE
