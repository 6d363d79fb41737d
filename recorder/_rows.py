"""Events -> Arrow: the store's columns, hot-field extraction, blobs and the chain link."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from footprint.events import EventBase, to_record
from recorder._chain import GENESIS, envelope_canonical, link_hash, record_canonical

__all__ = [
    "BLOB_KEY",
    "BLOB_SCHEMA",
    "EVENT_SCHEMA",
    "HOT_FIELDS",
    "RowBuilder",
    "hot_fields",
]

BLOB_KEY = "$blob"
"""A payload value ``{"$blob": "<sha256 hex>", "chars": n}`` stands for large text in ``blobs``."""

_ENVELOPE_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("schema_version", pa.int32()),
    ("run_id", pa.string()),
    ("seq", pa.int64()),
    ("ts", pa.int64()),
    ("type", pa.string()),
    ("turn", pa.int64()),
    ("iteration", pa.int64()),
    ("step_id", pa.string()),
    ("parent_step", pa.string()),
    ("trace_id", pa.string()),
    ("span_id", pa.string()),
)
ENVELOPE_NAMES = tuple(name for name, _ in _ENVELOPE_COLUMNS)

HOT_FIELDS: tuple[str, ...] = (
    "skill_id", "from_skill", "to_skill", "moved_by", "reason", "injection_id", "slot",
    "flavor", "tool_name", "tool_call_id", "model", "content_hash", "admitted_via",
)
"""Typed decision columns lifted out of the payload (``admitted_by`` is the int one)."""

_REQUIRED = ("run_id", "seq", "ts", "type")
EVENT_SCHEMA = pa.schema(
    [pa.field(n, t, nullable=n not in _REQUIRED) for n, t in _ENVELOPE_COLUMNS]
    + [pa.field(n, pa.string()) for n in HOT_FIELDS]
    + [
        pa.field("admitted_by", pa.int64()),
        pa.field("payload", pa.string(), nullable=False),
        pa.field("prev_hash", pa.binary(32), nullable=False),
        pa.field("hash", pa.binary(32), nullable=False),
    ]
)
BLOB_SCHEMA = pa.schema(
    [
        pa.field("hash", pa.string(), nullable=False),
        pa.field("chars", pa.int64(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
    ]
)

# Where each hot column is found in a payload: the first key path present wins.
_HOT_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "skill_id": (("skill_id",), ("requested_id",), ("volunteered_id",)),
    "from_skill": (
        ("from_skill",), ("from_skill_id",), ("cursor_move", "from_skill"), ("current_skill_id",)
    ),
    "to_skill": (("to",), ("won_id",), ("cursor_move", "to"), ("target_skill_id",),
                 ("winner", "target")),
    "moved_by": (("by",), ("cursor_move", "by")),
    "reason": (("reason",), ("chosen",)),
    "injection_id": (("injection_id",),),
    "slot": (("slot",),),
    "flavor": (("flavor",), ("source",)),
    "tool_name": (("tool_name",), ("winner", "tool_name")),
    "tool_call_id": (("tool_call_id",), ("winner", "tool_call_id")),
    "model": (("model",), ("to_model",)),
    "content_hash": (("content_hash",),),
    "admitted_via": (("admitted_via",),),
}


_Plan = tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]


def hot_plan(keys: Iterable[str]) -> _Plan:
    """The hot-column paths that can apply to a payload with these top-level keys."""
    present = set(keys)
    plan = []
    for column, paths in _HOT_PATHS.items():
        usable = tuple(p for p in paths if p[0] in present)
        if usable:
            plan.append((column, usable))
    return tuple(plan)


def hot_fields(payload: Mapping[str, Any], plan: _Plan | None = None) -> dict[str, str | None]:
    """The hot string columns of one payload (``None`` where the event has no such field)."""
    out: dict[str, str | None] = dict.fromkeys(HOT_FIELDS)
    for column, paths in plan if plan is not None else hot_plan(payload):
        for path in paths:
            value = payload.get(path[0])
            for key in path[1:]:
                value = value.get(key) if type(value) is dict else None
            if type(value) is str:
                out[column] = value
                break
    return out


_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


class RowBuilder:
    """Accumulates events as column lists and hands out Arrow batches.

    Keeps the per-run chain head (``run_id -> hash``) and the hashes of blobs
    it has already written, so a repeated prompt is stored once per writer.
    """

    def __init__(self, *, blob_min_chars: int = 256, seen_blob_limit: int = 200_000) -> None:
        self.blob_min_chars = blob_min_chars
        self._seen_limit = seen_blob_limit
        self._seen: set[str] = set()
        self.heads: dict[str, bytes] = {}
        self._plans: dict[str, _Plan] = {}
        self._cols: dict[str, list[Any]] = {f.name: [] for f in EVENT_SCHEMA}
        self._blobs: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._cols["seq"])

    def add_all(self, events: Iterable[EventBase]) -> None:
        for event in events:
            self.add(event)

    def add(self, event: EventBase) -> None:
        record = to_record(event)  # type: ignore[arg-type]
        cols = self._cols
        env = {name: record.pop(name, None) for name in ENVELOPE_NAMES}
        for name in ENVELOPE_NAMES:
            cols[name].append(env[name])
        tag = str(env["type"])
        plan = self._plans.get(tag)
        if plan is None:
            plan = self._plans[tag] = hot_plan(record)
        for column, value in hot_fields(record, plan).items():
            cols[column].append(value)
        admitted = record.get("admitted_by")
        cols["admitted_by"].append(admitted if isinstance(admitted, int) else None)
        payload_json = _dumps(self._blobify(record))
        cols["payload"].append(payload_json)
        run = str(env["run_id"])
        prev = self.heads.get(run, GENESIS)
        digest = link_hash(prev, record_canonical(envelope_canonical(env), payload_json))
        self.heads[run] = digest
        cols["prev_hash"].append(prev)
        cols["hash"].append(digest)

    def _blobify(self, payload: dict[str, Any]) -> dict[str, Any]:
        limit = self.blob_min_chars
        for key, value in payload.items():
            if isinstance(value, str) and len(value) >= limit:
                digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
                if digest not in self._seen:
                    self._blobs[digest] = value
                payload[key] = {BLOB_KEY: digest, "chars": len(value)}
        return payload

    def take(self) -> tuple[pa.RecordBatch | None, pa.RecordBatch | None]:
        """The accumulated events and new blobs as Arrow batches (``None`` when empty)."""
        events = blobs = None
        cols, found = self._cols, self._blobs
        self._cols, self._blobs = {f.name: [] for f in EVENT_SCHEMA}, {}
        if cols["seq"]:
            arrays = [pa.array(cols[f.name], f.type) for f in EVENT_SCHEMA]
            events = pa.RecordBatch.from_arrays(arrays, schema=EVENT_SCHEMA)
        if found:
            hashes = list(found)
            texts = [found[h] for h in hashes]
            blobs = pa.RecordBatch.from_arrays(
                [pa.array(hashes, pa.string()), pa.array([len(t) for t in texts], pa.int64()),
                 pa.array(texts, pa.large_string())],
                schema=BLOB_SCHEMA,
            )
            if len(self._seen) > self._seen_limit:
                self._seen.clear()
            self._seen.update(hashes)
        return events, blobs
