"""The store's Arrow schemas (events, blobs, chain, stats), apart from the writer's code.

A reader of the store (``recorder.store``) needs the columns only: importing them from
here leaves the event catalog and the converters (``recorder.write._rows``) unimported.
"""

from __future__ import annotations

import pyarrow as pa

from recorder.write._hot import HOT_FIELDS

__all__ = ["BLOB_SCHEMA", "CHAIN_SCHEMA", "ENVELOPE_NAMES", "ENVELOPE_TYPES", "EVENT_SCHEMA",
           "STATS_SCHEMA"]

ENVELOPE_TYPES: tuple[tuple[str, pa.DataType], ...] = (
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
"""The envelope columns in envelope order (``recorder.write._chain.ENVELOPE_ORDER``) with
their Arrow types."""

ENVELOPE_NAMES = tuple(name for name, _ in ENVELOPE_TYPES)

_REQUIRED = ("run_id", "seq", "ts", "type")
EVENT_SCHEMA = pa.schema(
    [pa.field(n, t, nullable=n not in _REQUIRED) for n, t in ENVELOPE_TYPES]
    + [pa.field(n, pa.string()) for n in HOT_FIELDS]
    + [
        pa.field("admitted_by", pa.int64()),
        pa.field("payload", pa.string(), nullable=False),
        pa.field("prev_check", pa.uint32(), nullable=False),
        pa.field("row_check", pa.uint32(), nullable=False),
    ]
)
"""One row per event; ``prev_check``/``row_check`` are the run's row checks (``_chain``)."""

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
        pa.field("format", pa.string(), nullable=False),
    ]
)
"""Per run, after every batch the writer wrote: its last seq there, the run's head, and
the chain format (``recorder.write._chain.CHAIN_FORMAT``) the head was taken in."""

STATS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("writer", pa.string(), nullable=False),
        pa.field("overflow", pa.int64(), nullable=False),
        pa.field("processor_drops", pa.int64(), nullable=False),
        pa.field("sink_drops", pa.int64(), nullable=False),
        pa.field("written_ns", pa.int64(), nullable=False),
        pa.field("unencodable", pa.int64(), nullable=False),
    ]
)
"""Per run and writer, cumulative counts: ``overflow`` (the recorder's full buffer),
``processor_drops`` (a processor's DROP or failure), ``sink_drops`` (what mirrors such as
OpenTelemetry lost) and ``unencodable`` (events this writer could not store even escaped)."""
