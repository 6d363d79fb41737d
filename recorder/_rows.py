"""Events -> Arrow: the store's columns, converted a batch at a time, class by class."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from footprint.events import EventBase
from recorder._chain import (
    ENVELOPE_ORDER,
    LOCATOR_BYTES,
    envelope_canonical,
    envelope_json,
    extend_chains,
)
from recorder._extract import BLOB_KEY, BlobSink, Body, plan_for
from recorder._hot import HOT_FIELDS, hot_fields, hot_plan

__all__ = [
    "BLOB_KEY",
    "BLOB_SCHEMA",
    "CHAIN_SCHEMA",
    "ENVELOPE_NAMES",
    "EVENT_SCHEMA",
    "HOT_FIELDS",
    "RowBuilder",
    "RunTail",
    "hot_fields",
    "hot_plan",
]

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

_LOCATOR = pa.binary(LOCATOR_BYTES)
_DIGEST = pa.binary(32)
_REQUIRED = ("run_id", "seq", "ts", "type")
EVENT_SCHEMA = pa.schema(
    [pa.field(n, t, nullable=n not in _REQUIRED) for n, t in _ENVELOPE_COLUMNS]
    + [pa.field(n, pa.string()) for n in HOT_FIELDS]
    + [
        pa.field("admitted_by", pa.int64()),
        pa.field("payload", pa.string(), nullable=False),
        pa.field("prev_hash", _LOCATOR, nullable=False),
        pa.field("hash", _LOCATOR, nullable=False),
    ]
)
"""One row per event; ``prev_hash``/``hash`` are locators of the link (see ``_chain``)."""

BLOB_SCHEMA = pa.schema(
    [
        pa.field("hash", pa.string(), nullable=False),
        pa.field("chars", pa.int64(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
    ]
)
CHAIN_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("segment", pa.string(), nullable=False),
        pa.field("last_seq", pa.int64(), nullable=False),
        pa.field("head", pa.binary(32), nullable=False),
    ]
)
"""Per run per sealed segment: the full SHA-256 link of the run's last record in it."""

class RunTail(NamedTuple):
    """A run's last record so far: its seq, its type tag and its full link hash."""

    seq: int
    type: str
    head: bytes

_CLASS_COLUMNS: dict[str, pa.DataType] = {
    **dict.fromkeys(HOT_FIELDS, pa.string()), "admitted_by": pa.int64()}
_ENVELOPE_TYPES = tuple((name, EVENT_SCHEMA.field(name).type) for name in ENVELOPE_ORDER)
_ENVELOPE_VALUES = attrgetter(*ENVELOPE_ORDER)
_ENVELOPE_GETTERS = tuple((name, attrgetter(name)) for name in ENVELOPE_ORDER)
_INTS = frozenset({int, type(None)})
_INT_FIELDS = ("iteration", "schema_version", "seq", "ts", "turn")
_CHUNK = 2048
"""Events converted per pass: small enough that one chunk's objects stay in the CPU cache."""


def _plain_ints(columns: Mapping[str, Sequence[Any]]) -> bool:
    """Every int envelope value an exact int or None (a float would be truncated by Arrow).

    Strings need no check here: Arrow refuses non-text in a string column, and
    ``orjson`` refuses the one thing Arrow takes (bytes).
    """
    for name in _INT_FIELDS:
        values = columns[name]
        try:
            if type(sum(values)) is int:  # C speed; a float, Decimal or None shows up here
                continue
        except TypeError:
            pass
        if not set(map(type, values)) <= _INTS:
            return False
    return True


def _reference_envelopes(events: list[EventBase]) -> list[bytes]:
    """``E`` by the reference spelling (raises on a value the spec refuses)."""
    return [
        envelope_canonical(dict(zip(ENVELOPE_ORDER, row, strict=True))).encode("utf-8")
        for row in map(_ENVELOPE_VALUES, events)
    ]


def _link(
    heads: dict[str, bytes], events: list[EventBase], env: dict[str, list[Any]],
    payloads: list[Body],
) -> tuple[list[bytes], list[bytes]]:
    """Chain the chunk. ``E`` is encoded inside the loop (made and dropped one at a time);
    a value ``orjson`` refuses sends the whole chunk down the reference path."""
    runs = env["run_id"]
    if not _plain_ints(env):
        return extend_chains(heads, runs, _reference_envelopes(events), payloads)
    try:
        return extend_chains(heads, runs, map(envelope_json, map(_ENVELOPE_VALUES, events)),
                             payloads)
    except orjson.JSONEncodeError:  # bytes or a lone surrogate; the chain was rolled back
        return extend_chains(heads, runs, _reference_envelopes(events), payloads)


def _scatter(target: list[Any], where: Sequence[int], values: Sequence[Any]) -> None:
    if len(where) == len(target):
        target[:] = values
    else:
        deque(map(target.__setitem__, where, values), maxlen=0)


def _locators(digests: list[bytes]) -> pa.Array:
    """The first ``LOCATOR_BYTES`` of each 32-byte digest, cut in one vectorised pass."""
    full = pa.Array.from_buffers(_DIGEST, len(digests), [None, pa.py_buffer(b"".join(digests))])
    return pc.binary_slice(full, 0, LOCATOR_BYTES)


class RowBuilder:
    """Turns events into Arrow batches, keeping each run's chain head between batches.

    ``add``/``add_all`` only queue; :meth:`take` converts everything queued
    in one columnar pass (grouped by event class) and links it onto
    ``heads`` (``run_id -> hash_n``). Blobs already written by this builder
    are not written again, so a repeated prompt is stored once per writer.
    """

    def __init__(self, *, blob_min_chars: int = 256, seen_blob_limit: int = 200_000) -> None:
        self.blob_min_chars = blob_min_chars
        self._blobs = BlobSink(blob_min_chars, seen_blob_limit)
        self.heads: dict[str, bytes] = {}
        self._pending: list[EventBase] = []
        self._tails: dict[str, RunTail] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, event: EventBase) -> None:
        self._pending.append(event)

    def add_all(self, events: Iterable[EventBase]) -> None:
        self._pending.extend(events)

    def take(self) -> tuple[list[pa.RecordBatch], pa.RecordBatch | None]:
        """The queued events as Arrow batches (one per chunk) and their new blobs (or ``None``)."""
        pending, self._pending = self._pending, []
        events = [self._convert(pending[at:at + _CHUNK]) for at in range(0, len(pending), _CHUNK)]
        found = self._blobs.take()
        blobs = None
        if found:
            texts = list(found.values())
            blobs = pa.RecordBatch.from_arrays(
                [pa.array(list(found), pa.string()), pa.array(list(map(len, texts)), pa.int64()),
                 pa.array(texts, pa.large_string())],
                schema=BLOB_SCHEMA,
            )
        return events, blobs

    def take_tails(self) -> dict[str, RunTail]:
        """Per run, the :class:`RunTail` of the rows taken since the last call."""
        tails, self._tails = self._tails, {}
        return tails

    def _convert(self, events: list[EventBase]) -> pa.RecordBatch:
        env = {name: list(map(get, events)) for name, get in _ENVELOPE_GETTERS}
        payloads, columns = self._class_columns(events)
        columns["payload"] = pa.array(payloads, pa.string())
        for name, kind in _ENVELOPE_TYPES:
            columns[name] = pa.array(env[name], kind)
        # Every fallible conversion is done: only now does the chunk join the chain.
        prev, link = _link(self.heads, events, env, payloads)
        self._note_tails(env["run_id"], env["seq"], env["type"])
        columns["prev_hash"], columns["hash"] = _locators(prev), _locators(link)
        return pa.RecordBatch.from_arrays([columns[f.name] for f in EVENT_SCHEMA],
                                          schema=EVENT_SCHEMA)

    def _class_columns(self, events: list[EventBase]) -> tuple[list[Body], dict[str, pa.Array]]:
        """Payload texts (emit order) and the hot/``admitted_by`` columns, class by class.

        Each class lifts only the columns it has; each column is converted
        once and put back in emit order by one Arrow ``take``.
        """
        n = len(events)
        groups: dict[type, list[int]] = {}
        for i, cls in enumerate(map(type, events)):
            groups.setdefault(cls, []).append(i)
        payloads: list[Body] = [b""] * n
        found: list[tuple[int, dict[str, Sequence[Any] | None]]] = []
        for cls, where in groups.items():
            plan, m = plan_for(cls), len(where)
            members = events if m == n else list(map(events.__getitem__, where))
            _scatter(payloads, where, plan.payloads(members, self._blobs))
            values: dict[str, Sequence[Any] | None] = dict(plan.hot_columns(members))
            values["admitted_by"] = plan.admitted_by(members)
            found.append((m, values))
        order = None if len(groups) == 1 else pc.sort_indices(
            pa.array([i for where in groups.values() for i in where], pa.int32()))
        columns: dict[str, pa.Array] = {}
        for name, kind in _CLASS_COLUMNS.items():
            if all(values.get(name) is None for _, values in found):
                columns[name] = pa.nulls(n, kind)
                continue
            joined: list[Any] = []  # class by class, the order ``order`` undoes
            for m, values in found:
                joined += values.get(name) or [None] * m
            array = pa.array(joined, kind)
            columns[name] = array if order is None else array.take(order)
        return payloads, columns

    def _note_tails(
        self, runs: Sequence[str], seqs: Sequence[int], types: Sequence[str]
    ) -> None:
        tails, heads, last_type = self._tails, self.heads, dict(zip(runs, types, strict=True))
        for run, seq in dict(zip(runs, seqs, strict=True)).items():
            tails[run] = RunTail(seq, last_type[run], heads[run])
