"""The record a compaction leaves, and the files it may touch.

A merged file names the files it replaces (``footprint.replaces`` in its
Parquet key-value metadata, store paths). It is written under a temp name,
fsynced, renamed into place and its folder fsynced *before* any original is
deleted, so the record is durable before it is acted on: a merged file that
is not there (or does not read) replaced nothing, and its originals stay.
The merged file is the record: written whole or not at all, it needs no
separate manifest. Everything here honours it: readers and compactions
never read a replaced file again, and :func:`finish` deletes the originals
an interrupted compaction left (never reading them).

Only the store's own files are merged or deleted: named like a writer's
segment (or a merged file), marked for their folder's kind
(``recorder.write._marker``) and holding exactly the columns footprint
writes there. Anything else stays where it is, for ``footprint doctor`` to name.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from recorder.write._layout import BLOBS, CHAIN, EVENTS, LIVE, STATS
from recorder.write._marker import kind_of, marker_problem
from recorder.write._schemas import BLOB_SCHEMA, CHAIN_SCHEMA, EVENT_SCHEMA, STATS_SCHEMA

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no compaction lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["REPLACES_KEY", "TEMP_GRACE_S", "Interrupted", "Owned", "compaction_lock",
           "effective_files", "finish", "finish_in", "folders", "fsync", "interrupted",
           "own_files", "own_name", "own_problem", "remove_stale_temps", "replaced_by",
           "stale_temps"]

REPLACES_KEY = b"footprint.replaces"
"""Metadata key of a merged file: the JSON list of the store paths it replaces."""
TEMP_GRACE_S = 5.0
"""A temp file younger than this is never removed (its writer may be about to rename it)."""
_NAME = re.compile(r"\d{8}T\d{6}-\d+-[0-9a-f]{8}-c?\d+")
"""A writer's segment or stats file, or a merged file (``<writer>-c0000``)."""
_TEMP = re.compile(r"\.(?P<name>\d{8}T\d{6}-\d+-[0-9a-f]{8}-c?\d+)\.parquet\.tmp")
_SCHEMAS = {EVENTS: EVENT_SCHEMA, BLOBS: BLOB_SCHEMA, CHAIN: CHAIN_SCHEMA, STATS: STATS_SCHEMA}


@dataclass(frozen=True, slots=True, kw_only=True)
class Interrupted:
    """A merged file in place whose originals are not all deleted yet (a compactor was
    killed between its rename and its deletions): readers skip the originals."""

    merged: Path
    originals: tuple[Path, ...]


def replaced_by(metadata: dict[bytes, bytes] | None) -> list[str]:
    """The store paths a merged file replaces (empty for any other file)."""
    raw = (metadata or {}).get(REPLACES_KEY)
    if raw is None:
        return []
    try:
        listed = json.loads(raw)
    except ValueError:
        return []
    return [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []


def folders(root: Path) -> list[Path]:
    """Every folder of sealed files: each events partition, ``chain/``, ``blobs/``, ``stats/``."""
    return [*sorted((root / EVENTS).glob("date=*")), root / CHAIN, root / BLOBS, root / STATS]


def fsync(path: Path) -> None:
    """Flush a file's data (or a folder's entries) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def own_name(path: Path) -> bool:
    """Whether ``path`` is named like a writer's segment, stats file or a merged file."""
    return _NAME.fullmatch(path.name.removesuffix(".parquet")) is not None


def _inspect(path: Path) -> tuple[str | None, list[str]]:
    """Why ``path`` is not one of the store's own files, else ``None``; what it replaces."""
    if not own_name(path):
        return "not named like a footprint segment", []
    kind = kind_of(path)
    try:
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
    except (OSError, pa.ArrowException) as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}", []
    problem = marker_problem(path, schema, meta.metadata, kind)
    if problem is None and not schema.remove_metadata().equals(
            _SCHEMAS[kind].remove_metadata()):
        problem = f"not the columns footprint writes in {kind}/"
    return problem, replaced_by(meta.metadata) if problem is None else []


def own_problem(path: Path) -> str | None:
    """Why ``path`` is not one of the store's own sealed files (``None``: it is): the name,
    the marker of its folder's kind, and exactly the columns footprint writes there."""
    return _inspect(path)[0]


Owned = list[tuple[Path, list[str]]]
"""One scan of a folder: the store's own files there, and what each replaces."""


def own_files(folder: Path) -> Owned:
    """The store's own files in ``folder`` and what each replaces (one footer read each)."""
    found = []
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        problem, listed = _inspect(path)
        if problem is None:
            found.append((path, listed))
    return found


def effective_files(root: str | os.PathLike[str], folder: Path,
                    owned: Owned | None = None) -> list[Path]:
    """The store's own sealed files of ``folder`` that no merged file replaces: what readers
    read there (a live segment's sealed files aside). ``owned``: its :func:`own_files`."""
    base = Path(root)
    owned = own_files(folder) if owned is None else owned
    gone = {base / rel for _, listed in owned for rel in listed}
    return [path for path, _ in owned if path not in gone and path.exists()]


def _left(root: Path, folder: Path, owned: Owned) -> list[Interrupted]:
    found = []
    for path, listed in owned:
        left = [root / rel for rel in listed if (root / rel).parent == folder
                and own_name(root / rel) and (root / rel).exists()]
        if left:
            found.append(Interrupted(merged=path, originals=tuple(sorted(left))))
    return found


def interrupted(root: str | os.PathLike[str]) -> list[Interrupted]:
    """Merged files whose originals (of their own folder, named like ours) still exist."""
    base = Path(root)
    return [item for folder in folders(base) for item in _left(base, folder, own_files(folder))]


def _reads_whole(path: Path) -> bool:
    try:
        pq.read_table(path, partitioning=None)
    except (OSError, pa.ArrowException):
        return False
    return True


def finish_in(root: Path, folder: Path, owned: Owned) -> list[Path]:
    """:func:`finish` for one folder, given its :func:`own_files`."""
    deleted = []
    for item in _left(root, folder, owned):
        if _reads_whole(item.merged):
            for path in item.originals:
                path.unlink(missing_ok=True)
                deleted.append(path)
    return deleted


def finish(root: str | os.PathLike[str]) -> list[Path]:
    """Finish every interrupted compaction: delete the originals its merged file replaces
    (never reading them), once the merged file reads back whole (else they stay, the good
    copy). The deleted files. Call under :func:`compaction_lock` (``compact`` does)."""
    base = Path(root)
    return [path for folder in folders(base) for path in finish_in(base, folder,
                                                                    own_files(folder))]


def stale_temps(root: str | os.PathLike[str], *, locked: bool = False) -> list[Path]:
    """Temp files never to be renamed into place: a writer's whose writer is gone (holds no
    lock) and older than :data:`TEMP_GRACE_S`; a compactor's when ``locked`` (the caller holds
    :func:`compaction_lock`: no compactor is at work), else once older than that too."""
    from recorder.write._adopt import writer_alive, writer_of  # _adopt seals with _segment

    base, found, now = Path(root), [], time.time()
    for folder in folders(base):
        for path in sorted(folder.glob(".*.tmp")) if folder.is_dir() else []:
            match = _TEMP.fullmatch(path.name)
            if match is None:
                continue
            merged = match["name"].rsplit("-", 1)[1].startswith("c")
            if merged and locked:
                found.append(path)
            elif not merged and writer_alive(base, writer_of(match["name"])):
                continue
            else:
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime >= TEMP_GRACE_S:
                        found.append(path)
    return found


def remove_stale_temps(root: str | os.PathLike[str]) -> list[Path]:
    """Remove :func:`stale_temps` (under the compaction lock; none while a compactor works)."""
    if not stale_temps(root, locked=True):
        return []  # the common case: no lock file made
    with compaction_lock(Path(root)) as held:
        if not held:
            return []
        gone = stale_temps(root, locked=True)
        for path in gone:
            path.unlink(missing_ok=True)
        return gone


@contextlib.contextmanager
def compaction_lock(root: Path) -> Iterator[bool]:
    """The store's compaction lock (``live/compact.lock``): ``False`` when another holds it."""
    path = root / LIVE / "compact.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as file:
        if fcntl is not None:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False  # another compactor is at work
                return
        yield True
