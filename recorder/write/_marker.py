"""The store's own mark in every Parquet file it writes, so a reader knows its files.

Each sealed file carries ``footprint.store = <kind>`` (``events``, ``blobs``,
``chain``, ``stats``) in its Parquet key-value metadata. Discovery
(``recorder.store._discover``) takes a file into the store only with the
marker of its folder's kind; a file without any marker only when it is an
older footprint file: named like a writer's segment and holding the
columns only footprint writes (the row checks of events, the chain's head).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from recorder.write._layout import BLOBS, CHAIN, EVENTS, STATS

__all__ = ["MARKER_KEY", "kind_of", "marked", "marked_schema", "marker_problem"]

MARKER_KEY = b"footprint.store"
"""The key of the store's marker in a Parquet file's key-value metadata."""

_SEGMENT = re.compile(r"\d{8}T\d{6}-\d+-[0-9a-f]{8}-\d+")
"""A writer's segment or stats file name (``<utc>-<pid>-<random>-<n>``)."""

_LEGACY_COLUMNS = {
    EVENTS: ("run_id", "seq", "ts", "type", "payload", "prev_check", "row_check"),
    BLOBS: ("hash", "chars", "text"),
    CHAIN: ("run_id", "segment", "last_seq", "head"),
    STATS: ("run_id", "writer", "overflow", "processor_drops", "written_ns"),
}
"""What an unmarked file of each kind must hold to be taken as an older footprint file."""


def kind_of(path: Path) -> str:
    """The kind of sealed file at ``path`` (by its folder: ``events/date=…/`` is events)."""
    folder = path.parent.name
    return folder if folder in (BLOBS, CHAIN, STATS) else EVENTS


def marked(table: pa.Table, kind: str) -> pa.Table:
    """``table`` with the store's marker for ``kind`` in its schema metadata."""
    return table.replace_schema_metadata({**(table.schema.metadata or {}), MARKER_KEY:
                                          kind.encode()})


def marked_schema(schema: pa.Schema, kind: str) -> pa.Schema:
    """``schema`` with the store's marker for ``kind``."""
    return schema.with_metadata({**(schema.metadata or {}), MARKER_KEY: kind.encode()})


def marker_problem(path: Path, schema: pa.Schema, metadata: dict[bytes, bytes] | None,
                   kind: str) -> str | None:
    """Why the Parquet file at ``path`` is not one of the store's ``kind`` files, or ``None``."""
    found = (metadata or {}).get(MARKER_KEY)
    if found is not None:
        text = found.decode("utf-8", "replace")
        return None if text == kind else f"a footprint {text!r} file, not {kind!r}"
    missing = [c for c in _LEGACY_COLUMNS[kind] if c not in schema.names]
    if _SEGMENT.fullmatch(path.stem) and not missing:
        return None  # written before files were marked
    return ("not a footprint store file (no footprint.store marker in its metadata"
            f"{'' if _SEGMENT.fullmatch(path.stem) else ', not named like a segment'}"
            f"{f', no {missing[0]!r} column' if missing else ''}); "
            "move files of other tools out of the store")
