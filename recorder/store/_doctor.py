"""``examine`` a store: every damaged file, every orphaned live segment; ``quarantine`` them.

A full check reads every value of every sealed file once (DuckDB validates
each page and every string's UTF-8 on the way), adds the files discovery
already refused (torn footer, wrong column types, a live segment in another
schema), and lists the live segments whose writer process is gone (a killed
writer's leftovers). :func:`quarantine` moves damaged files to
``quarantine/`` under the store (keeping their relative path), where no
reader looks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recorder.store._damage import file_problem
from recorder.write._layout import LIVE, QUARANTINE, segment_of

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["Checkup", "DamagedFile", "Orphan", "examine", "orphans", "quarantine"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class DamagedFile:
    """A store file no reader can use, and why."""

    path: Path
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Orphan:
    """A live segment whose writer (``pid``) is no longer running."""

    segment: str
    pid: int
    files: tuple[Path, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkup:
    """What :func:`examine` found."""

    checked: int
    damaged: tuple[DamagedFile, ...]
    orphans: tuple[Orphan, ...]

    @property
    def healthy(self) -> bool:
        return not self.damaged and not self.orphans


def _pid_of(segment: str) -> int | None:
    """The writer pid in a segment id (``<utc>-<pid>-<random>-<n>``), if it has one."""
    parts = segment.split("-")
    return int(parts[1]) if len(parts) >= 3 and parts[1].isdigit() else None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def orphans(root: Path) -> list[Orphan]:
    """Live segments under ``root`` whose writer process has ended without sealing them."""
    by_segment: dict[str, list[Path]] = {}
    for path in sorted((root / LIVE).glob("*.arrows")):
        if not path.name.startswith((".", "_")):
            by_segment.setdefault(segment_of(path), []).append(path)
    found = []
    for segment, files in by_segment.items():
        pid = _pid_of(segment)
        if pid is not None and pid != os.getpid() and not _running(pid):
            found.append(Orphan(segment=segment, pid=pid, files=tuple(files)))
    return found


def examine(store: StoreView, progress: Progress | None = None) -> Checkup:
    """Read every sealed file once; return the damaged ones and the orphaned segments."""
    f = store.files
    files = [*f.events, *f.blobs, *f.chain, *f.stats]
    damaged = {p: why for p, why in store.damaged.items()}
    damaged.update({p: f.reasons.get(p, "unreadable") for p in f.skipped if p not in damaged})
    for done, path in enumerate(files, 1):
        why = file_problem(store.con, path)
        if why is not None:
            damaged[path] = why
        if progress is not None:
            progress(done, len(files))
    return Checkup(
        checked=len(files) + len(f.skipped),
        damaged=tuple(DamagedFile(path=p, reason=r) for p, r in sorted(damaged.items())),
        orphans=tuple(o for o in orphans(store.root) if not damaged.keys() & set(o.files)))


def quarantine(store: StoreView, damaged: Iterable[DamagedFile]) -> list[tuple[Path, Path]]:
    """Move each damaged file to ``quarantine/<its path in the store>``; ``(from, to)`` pairs.

    The store is rescanned afterwards, so it reads on without them.
    """
    moved = []
    for item in damaged:
        source = item.path
        try:
            relative = source.resolve().relative_to(store.root.resolve())
        except ValueError:
            continue  # not under this store: never move it
        target = store.root / QUARANTINE / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.exists():
            os.replace(source, target)
            moved.append((source, target))
    store.damaged.clear()
    store.refresh()
    return moved
