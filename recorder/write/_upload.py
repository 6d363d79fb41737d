"""Writing a store to object storage: live segments staged locally, sealed files uploaded.

``ParquetSink("s3://bucket/prefix")`` (any pyarrow filesystem URI) keeps its
live segments on local disk, in a staging store under the cache folder, so a
SIGKILL loses nothing that was flushed; every file the writer seals (events,
blobs, chain heads, stats) is uploaded under the same relative key and then
removed locally. Each writer uploads its own files (their names carry its
writer id), so many processes, on one machine or many, write one bucket
without locks; at start it also uploads what writers killed before they
uploaded left in the staging store (their live segments sealed first,
``recorder.write._adopt``). Reading such a store back: ``recorder.store._remote``.

Where: ``$FOOTPRINT_CACHE`` or ``~/.cache/footprint``. Credentials, region
and endpoint come from pyarrow's usual sources: the ``AWS_*`` variables and
the URI's query (``?endpoint_override=host:port&scheme=http&region=…``).
"""


from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError
from recorder.write._adopt import writer_alive
from recorder.write._layout import BLOBS, CHAIN, EVENTS, STATS

__all__ = [
    "SEALED", "Uploader", "cache_root", "is_remote", "open_uri", "orphaned", "staging_root",
    "uri_digest",
]

SEALED = (EVENTS, BLOBS, CHAIN, STATS)
"""The folders of sealed files: what is uploaded, and what a reader mirrors."""


def is_remote(location: str | os.PathLike[str] | None) -> bool:
    """Whether ``location`` names object storage (a URI other than ``file://``)."""
    text = os.fspath(location) if location is not None else ""
    return "://" in text and not text.startswith("file://")


def cache_root() -> Path:
    """``$FOOTPRINT_CACHE``, else ``~/.cache/footprint``."""
    return Path(os.environ.get("FOOTPRINT_CACHE") or Path.home() / ".cache" / "footprint")


def uri_digest(uri: str) -> str:
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:16]


def staging_root(uri: str) -> Path:
    """The local store where writers to ``uri`` keep their live segments."""
    return cache_root() / "staging" / uri_digest(uri)


def open_uri(uri: str) -> tuple[Any, str]:
    import pyarrow.fs as pafs

    try:
        fs, base = pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError) as exc:
        raise ConfigError(
            f"store {uri!r} is not a storage URI pyarrow can open ({exc}); write e.g. "
            "'s3://bucket/prefix?region=eu-west-1' or a local directory"
        ) from None
    return fs, base.rstrip("/")


@dataclass(slots=True)
class Uploader:
    """Uploads one writer's sealed files from its staging store to the URI."""

    uri: str
    local: Path
    writer_id: str
    uploaded: int = 0
    failures: int = 0
    _fs: Any = field(default=None, repr=False)
    _base: str = ""

    def __post_init__(self) -> None:
        self._fs, self._base = open_uri(self.uri)

    def _own(self, orphans: bool) -> list[Path]:
        return [p for p in _sealed(self.local) if p.name.startswith(self.writer_id)
                or (orphans and not writer_alive(self.local, _writer(p)))]

    def sync(self, *, orphans: bool = False) -> bool:
        """Upload every sealed file of this writer not uploaded yet (``orphans``: and those
        of writers that are gone); ``False`` if one failed.

        A failed upload stays on local disk and is tried again on the next sync.
        """
        ok = True
        for path in self._own(orphans):
            key = f"{self._base}/{path.relative_to(self.local).as_posix()}"
            try:
                with path.open("rb") as src, self._fs.open_output_stream(key) as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except OSError:
                if not path.exists():  # a gone writer's file another adopter uploaded
                    continue
                self.failures += 1
                ok = False
                continue
            path.unlink(missing_ok=True)
            self.uploaded += 1
        return ok


def orphaned(local: Path) -> list[Path]:
    """The sealed files in the staging store ``local`` of writers that are gone: not
    uploaded yet (the next writer's start uploads them)."""
    return [p for p in _sealed(local) if not writer_alive(local, _writer(p))]


def _sealed(local: Path) -> list[Path]:
    found: list[Path] = []
    for folder in SEALED:
        root = local / folder
        if root.is_dir():
            found.extend(root.rglob("[!.]*.parquet"))
    return sorted(found)


def _writer(path: Path) -> str:
    """The writer id a sealed file's name starts with (``<UTC>-<pid>-<hex>-…``)."""
    return "-".join(path.name.split(".", 1)[0].split("-")[:3])
