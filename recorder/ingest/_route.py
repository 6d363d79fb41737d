"""Routing by trace id: one OTLP body split into a body per worker, so every span (and
log record) of one trace is mapped by the same worker however the batches arrive.

A trace's worker is its id's last 8 bytes (the random part of a W3C trace id), as a
number, modulo the workers — the same for protobuf and JSON, in every worker process.
What has no valid trace id (and a body that does not parse) stays with the worker that
took the request, which counts it as its intake does.
"""

from __future__ import annotations

from typing import Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from footprint._errors import ConfigError
from recorder.ingest._otlp_json import _hex_id
from recorder.ingest._raw import Format, Signal

__all__ = ["slot_of", "split_body"]

_PB: dict[str, tuple[Any, str, str, str]] = {
    "traces": (ExportTraceServiceRequest, "resource_spans", "scope_spans", "spans"),
    "logs": (ExportLogsServiceRequest, "resource_logs", "scope_logs", "log_records")}
_JSON = {"traces": ("resourceSpans", "scopeSpans", "spans"),
         "logs": ("resourceLogs", "scopeLogs", "logRecords")}


def slot_of(trace_id: bytes, workers: int) -> int | None:
    """The worker of a trace (``None``: not a trace id — wrong size or all zero bytes)."""
    if len(trace_id) != 16 or not any(trace_id):
        return None
    return int.from_bytes(trace_id[8:], "big") % workers


def split_body(body: bytes, signal: Signal, fmt: Format, *, workers: int,
               home: int) -> list[bytes | None]:
    """``body`` as one body per worker (``None``: nothing for that worker); the whole body
    (unchanged, not re-encoded) at ``home`` when every item is home's or it does not parse."""
    if not isinstance(workers, int) or workers < 1 or not 0 <= home < workers:
        raise ConfigError(f"split_body(workers={workers!r}, home={home!r}): a worker count "
                          ">= 1 and a home slot below it")
    whole: list[bytes | None] = [None] * workers
    whole[home] = body
    if workers == 1:
        return whole
    try:
        parts = _split_pb(body, signal, workers, home) if fmt == "pb" \
            else _split_json(body, signal, workers, home)
    except Exception:  # protobuf's DecodeError, JSON of the wrong shape: home counts it
        return whole
    return whole if parts is None else parts


def _split_pb(body: bytes, signal: Signal, workers: int, home: int) -> list[bytes | None] | None:
    kind, outer, inner, items = _PB[signal]
    doc = kind()
    doc.ParseFromString(body)
    slots = [[slot_of(item.trace_id, workers) for sc in getattr(res, inner)
              for item in getattr(sc, items)] for res in getattr(doc, outer)]
    if all(s in (None, home) for group in slots for s in group):
        return None
    out: list[Any] = [kind() for _ in range(workers)]
    for res, group in zip(getattr(doc, outer), slots, strict=True):
        made: dict[int, Any] = {}
        n = 0
        for sc in getattr(res, inner):
            scoped: dict[int, Any] = {}
            for item in getattr(sc, items):
                found = group[n]
                slot = home if found is None else found
                n += 1
                if slot not in scoped:
                    if slot not in made:
                        made[slot] = getattr(out[slot], outer).add(resource=res.resource,
                                                                   schema_url=res.schema_url)
                    scoped[slot] = getattr(made[slot], inner).add(scope=sc.scope,
                                                                  schema_url=sc.schema_url)
                getattr(scoped[slot], items).append(item)
    return [part.SerializeToString() if getattr(part, outer) else None for part in out]


def _json_slot(item: Any, workers: int, home: int) -> int:
    found = _hex_id(item.get("traceId"), 16) if isinstance(item, dict) else None
    slot = slot_of(bytes.fromhex(found), workers) if found is not None else None
    return home if slot is None else slot


def _split_json(body: bytes, signal: Signal, workers: int,
                home: int) -> list[bytes | None] | None:
    outer, inner, items = _JSON[signal]
    doc = orjson.loads(body)
    out: list[dict[str, Any]] = [{outer: []} for _ in range(workers)]
    moved = False
    for res in doc.get(outer) or []:
        made: dict[int, dict[str, Any]] = {}
        for sc in res.get(inner) or []:
            scoped: dict[int, dict[str, Any]] = {}
            for item in sc.get(items) or []:
                slot = _json_slot(item, workers, home)
                moved = moved or slot != home
                if slot not in scoped:
                    if slot not in made:
                        made[slot] = {**res, inner: []}
                        out[slot][outer].append(made[slot])
                    scoped[slot] = {**sc, items: []}
                    made[slot][inner].append(scoped[slot])
                scoped[slot][items].append(item)
    if not moved:
        return None
    return [orjson.dumps(part) if part[outer] else None for part in out]
