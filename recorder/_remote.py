"""A store on object storage: any pyarrow filesystem URI (``s3://bucket/prefix``, ``gs://…``).

Writing (``ParquetSink("s3://bucket/prefix")``): live segments stay on local
disk, in a staging store under the cache folder, so a SIGKILL loses nothing
that was flushed; every file the writer seals (events, blobs, chain heads,
stats) is uploaded under the same relative key and then removed locally.
Each writer uploads only its own files (their names carry its writer id), so
many processes, on one machine or many, write one bucket without locks.

Reading (``open_store("s3://bucket/prefix")``, ``footprint --store
s3://…``): the sealed files are mirrored into a local cache folder — new or
changed files are downloaded, files gone from the bucket are removed — and
DuckDB reads the mirror. Spark and other engines read the bucket directly
(``recorder.spark``).

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
from recorder._layout import BLOBS, CHAIN, EVENTS, STATS

__all__ = ["Uploader", "cache_root", "is_remote", "mirror", "staging_root"]

SEALED = (EVENTS, BLOBS, CHAIN, STATS)
"""The folders of sealed files: what is uploaded, and what a reader mirrors."""


def is_remote(location: str | os.PathLike[str] | None) -> bool:
    """Whether ``location`` names object storage (a URI other than ``file://``)."""
    text = os.fspath(location) if location is not None else ""
    return "://" in text and not text.startswith("file://")


def cache_root() -> Path:
    """``$FOOTPRINT_CACHE``, else ``~/.cache/footprint``."""
    return Path(os.environ.get("FOOTPRINT_CACHE") or Path.home() / ".cache" / "footprint")


def _digest(uri: str) -> str:
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:16]


def staging_root(uri: str) -> Path:
    """The local store where writers to ``uri`` keep their live segments."""
    return cache_root() / "staging" / _digest(uri)


def _open(uri: str) -> tuple[Any, str]:
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
        self._fs, self._base = _open(self.uri)

    def _own(self) -> list[Path]:
        found: list[Path] = []
        for folder in SEALED:
            root = self.local / folder
            if root.is_dir():
                found.extend(p for p in root.rglob(f"{self.writer_id}*.parquet"))
        return sorted(found)

    def sync(self) -> bool:
        """Upload every sealed file of this writer not uploaded yet; ``False`` if one failed.

        A failed upload stays on local disk and is tried again on the next sync.
        """
        ok = True
        for path in self._own():
            key = f"{self._base}/{path.relative_to(self.local).as_posix()}"
            try:
                with path.open("rb") as src, self._fs.open_output_stream(key) as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except OSError:
                self.failures += 1
                ok = False
                continue
            path.unlink(missing_ok=True)
            self.uploaded += 1
        return ok


def mirror(uri: str) -> Path:
    """Bring the sealed files at ``uri`` into the local cache; return the cached store."""
    import pyarrow.fs as pafs

    fs, base = _open(uri)
    local = cache_root() / "stores" / _digest(uri)
    info = fs.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        raise ConfigError(
            f"no footprint store at {uri!r}; record a run first (ParquetSink({uri!r})) "
            "or check the bucket, prefix and credentials"
        )
    wanted: dict[str, int] = {}
    for folder in SEALED:
        selector = pafs.FileSelector(f"{base}/{folder}", recursive=True, allow_not_found=True)
        for item in fs.get_file_info(selector):
            if item.type == pafs.FileType.File and item.path.endswith(".parquet"):
                wanted[item.path[len(base) + 1:]] = int(item.size or 0)
    for rel, size in wanted.items():
        target = local / rel
        if not target.exists() or target.stat().st_size != size:
            _download(fs, f"{base}/{rel}", target)
    _forget_gone(local, wanted)
    return local


def _download(fs: Any, key: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.part")
    with fs.open_input_stream(key) as src, tmp.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.replace(tmp, target)


def _forget_gone(local: Path, wanted: dict[str, int]) -> None:
    for folder in SEALED:
        root = local / folder
        if not root.is_dir():
            continue
        for path in root.rglob("*.parquet"):
            if path.relative_to(local).as_posix() not in wanted:
                path.unlink(missing_ok=True)
