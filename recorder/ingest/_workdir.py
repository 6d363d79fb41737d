"""Where an intake keeps its own state (raw batches, the writers it used), and where it reads
what the store holds.

A local store directory is both. A store on object storage (``s3://bucket/prefix``) keeps
the intake's state in the local staging store its writers already use for that URI
(``recorder.write._upload.staging_root``: ``$FOOTPRINT_CACHE/staging/<digest>``), and what
is mapped is read from the bucket (its sealed files, mirrored). One intake per working
directory (and per worker of ``receive --workers``) at a time: it holds an exclusive
``flock`` the kernel lets go of when the process dies, so a restart after SIGKILL takes it
and a second receiver beside a live one is refused (it would map the first one's pending
batches again).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from footprint._errors import ConfigError, RunError
from recorder.write._layout import resolve_store
from recorder.write._upload import is_remote, open_uri, staging_root

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock, one receiver is on trust
    fcntl = None  # type: ignore[assignment]

__all__ = ["Workdir", "remote_refused", "workdir"]

_OF = Path("ingest") / "store-uri"
"""In a working directory: the URI it works for (so it is never taken for a store)."""


@dataclass(frozen=True, slots=True)
class Workdir:
    """``root``: the local directory of the intake's state (for a local store, the store);
    ``uri``: the store on object storage, ``None`` for a local one."""

    root: Path
    uri: str | None = None

    @property
    def source(self) -> str | Path:
        """What ``open_store`` reads for what the store holds."""
        return self.uri if self.uri is not None else self.root


def workdir(store: str | os.PathLike[str] | None) -> Workdir:
    """The working directory of an intake into ``store`` (a directory or a storage URI)."""
    location = os.fspath(store) if store is not None else os.environ.get("FOOTPRINT_STORE")
    if location is None or not is_remote(location):
        root = resolve_store(store)
        marker = root / _OF
        if marker.is_file():  # mapping into it as a store would upload those runs again
            uri = marker.read_text(encoding="utf-8").strip()
            raise ConfigError(f"{str(root)!r} is the working directory of a receiver "
                              f"writing {uri!r}, not a store; pass --store {uri!r}")
        return Workdir(root)
    open_uri(location)  # a URI pyarrow cannot open is a ConfigError now, not at the first run
    return Workdir(staging_root(location), location)


def claim(work: Workdir, worker: int | None) -> IO[bytes] | None:
    """Hold the lock of ``work`` for this intake (``None`` for a local store: its own
    rules); a ``ConfigError`` naming the fix when another live process holds it."""
    if work.uri is None or fcntl is None:
        return None
    path = work.root / "ingest" / f"receiver{'' if worker is None else f'-w{worker}'}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    file = open(path, "a+b")  # noqa: SIM115 - held for the intake's life
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        file.seek(0)
        pid = file.read().decode("ascii", "replace").strip() or "unknown"
        file.close()
        raise ConfigError(
            f"another receiver on this machine (pid {pid}) writes {work.uri!r} from "
            f"{str(work.root)!r}; stop it, or give this one a working directory of its own "
            "(FOOTPRINT_CACHE=DIR)") from None
    file.truncate(0)
    file.write(str(os.getpid()).encode("ascii"))
    file.flush()
    (work.root / _OF).write_text(work.uri + "\n", encoding="utf-8")
    return file


def release(lock: IO[bytes] | None) -> None:
    if lock is not None:
        with contextlib.suppress(OSError):
            lock.close()


def unread(work: Workdir, exc: BaseException) -> RunError:
    """Why an intake into object storage does not start when the bucket cannot be read:
    mapping its pending batches blind could store a trace twice."""
    return RunError(f"the runs stored at {work.uri!r} could not be read "
                    f"({type(exc).__name__}: {exc}); nothing was mapped, so no trace is "
                    "stored twice — check the endpoint, bucket and credentials, then start "
                    "again")


def remote_refused(store: str | os.PathLike[str] | None, what: str, instead: str) -> None:
    """A ``ConfigError`` for what a store on object storage cannot do yet."""
    location = os.fspath(store) if store is not None else os.environ.get("FOOTPRINT_STORE")
    if location is not None and is_remote(location):
        raise ConfigError(f"{what} --store {location!r}: not for a store on object storage "
                          f"yet; {instead}")
