"""Where things live in a store directory, and how writers name their files."""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path

__all__ = [
    "BLOBS",
    "CHAIN",
    "EVENTS",
    "LIVE",
    "QUARANTINE",
    "STATS",
    "STORE_DIRS",
    "SUMMARIES",
    "default_store_path",
    "is_live_stream",
    "is_writer_lock",
    "new_writer_id",
    "resolve_store",
    "segment_of",
]

EVENTS = "events"
"""Sealed events: ``events/date=YYYY-MM-DD/<segment>.parquet`` (Hive-partitioned)."""
BLOBS = "blobs"
"""Sealed blobs: ``blobs/<segment>.parquet`` (hash, chars, text)."""
LIVE = "live"
"""In-flight segments: ``live/<segment>.events.arrows`` / ``.blobs.arrows`` (Arrow IPC)."""
CHAIN = "chain"
"""Chain heads: ``chain/<segment>.parquet`` (per run: last seq and its full link hash)."""
STATS = "stats"
"""Recorder counters: ``stats/<writer>-<n>.parquet`` (per-run overflow and drops)."""

SUMMARIES = "summaries"
"""Cached outlines of sealed events files: ``summaries/<segment>.<date>.<size>-<mtime>.parquet``
(``recorder.store._outline``); derived, safe to delete."""

QUARANTINE = "quarantine"
"""Damaged files moved aside by ``footprint doctor --quarantine`` (never read)."""
STORE_DIRS = (EVENTS, LIVE, BLOBS, STATS, CHAIN, SUMMARIES, QUARANTINE, "scores", "datasets",
              "experiments", "ingest", "records.lock", "prices.json")
"""Every entry a store may hold at its top: its directories (score heads, datasets and
experiments, the intake's raw batches among them) and its own files."""

_ENV = "FOOTPRINT_STORE"
_DEFAULT = ".footprint"


def default_store_path() -> Path:
    """``$FOOTPRINT_STORE`` when set, else ``./.footprint``."""
    return Path(os.environ.get(_ENV) or _DEFAULT)


def resolve_store(path: str | os.PathLike[str] | None) -> Path:
    """``path`` when given, else :func:`default_store_path`."""
    return Path(path) if path is not None else default_store_path()


def new_writer_id() -> str:
    """A writer id unique across processes: UTC time, pid and a random suffix."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return f"{stamp}-{os.getpid()}-{secrets.token_hex(4)}"


def segment_of(path: Path) -> str:
    """The segment id a sealed or live file belongs to (its name up to the first dot)."""
    return path.name.split(".", 1)[0]


_WRITER = r"\d{8}T\d{6}-\d+-[0-9a-f]{8}"
"""A writer id (:func:`new_writer_id`)."""
_LIVE_STREAM = re.compile(_WRITER + r"-\d+\.(?:events|blobs|chain)\.arrows")
_WRITER_LOCK = re.compile(_WRITER + r"\.lock")


def is_live_stream(name: str) -> bool:
    """Whether ``name`` is one a writer gives a live stream (``<segment>.<kind>.arrows``,
    the segment named by :func:`new_writer_id` and a count)."""
    return _LIVE_STREAM.fullmatch(name) is not None


def is_writer_lock(name: str) -> bool:
    """Whether ``name`` is a writer's lock file (``<writer id>.lock``; not the compactor's)."""
    return _WRITER_LOCK.fullmatch(name) is not None
