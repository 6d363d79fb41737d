"""Events -> Arrow: the store's columns, converted a batch at a time, class by class."""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any, NamedTuple

import pyarrow as pa

from footprint.events import EventBase
from recorder._chain import LOCATOR_BYTES
from recorder._columns import ENVELOPE_TYPES, convert
from recorder._extract import BLOB_KEY, BlobSink
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

ENVELOPE_NAMES = tuple(name for name, _ in ENVELOPE_TYPES)

_LOCATOR = pa.binary(LOCATOR_BYTES)
_REQUIRED = ("run_id", "seq", "ts", "type")
EVENT_SCHEMA = pa.schema(
    [pa.field(n, t, nullable=n not in _REQUIRED) for n, t in ENVELOPE_TYPES]
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


_RUN = itemgetter(ENVELOPE_NAMES.index("run_id"))
_SEQ, _TYPE = ENVELOPE_NAMES.index("seq"), ENVELOPE_NAMES.index("type")
_CHUNK = 8192
"""Events converted per pass (the recorder's batch size): each pass makes a few dozen Arrow
calls whatever its size, and keeps only one envelope tuple per event alive."""


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
        batches = []
        for at in range(0, len(pending), _CHUNK):
            events = pending[at:at + _CHUNK]
            batch, rows = convert(events, self._blobs, self.heads, EVENT_SCHEMA)
            self._note_tails(rows)
            batches.append(batch)
        return batches, self._blob_batch()

    def _blob_batch(self) -> pa.RecordBatch | None:
        found = self._blobs.take()
        if not found:
            return None
        texts = list(found.values())
        return pa.RecordBatch.from_arrays(
            [pa.array(list(found), pa.string()), pa.array(list(map(len, texts)), pa.int64()),
             pa.array(texts, pa.large_string())],
            schema=BLOB_SCHEMA,
        )

    def take_tails(self) -> dict[str, RunTail]:
        """Per run, the :class:`RunTail` of the rows taken since the last call."""
        tails, self._tails = self._tails, {}
        return tails

    def _note_tails(self, rows: list[tuple[Any, ...]]) -> None:
        """Each run's last row of a chunk (envelope rows in emit order) with its new head."""
        for run, row in dict(zip(map(_RUN, rows), rows, strict=True)).items():
            self._tails[run] = RunTail(row[_SEQ], row[_TYPE], self.heads[run])
