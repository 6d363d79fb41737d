"""Reading a store on object storage: its sealed files mirrored into a local cache.

``open_store("s3://bucket/prefix")`` (``footprint --store s3://…``): new or
changed sealed files are downloaded, files gone from the bucket are removed,
and DuckDB reads the mirror. Spark and other engines read the bucket directly
(``recorder.spark``). Writing such a store: ``recorder.write._upload``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError
from recorder.write._upload import SEALED, cache_root, is_remote, open_uri, uri_digest

__all__ = ["DOWNLOADS", "is_remote", "mirror"]

DOWNLOADS = 16
"""Files downloaded at once. Each file costs two requests, so a new machine's first read
of a bucket of 1,003 files, with 20 ms added to each request, took 46.1 s one after the
other and 4.5 s this way (``tests/benchmarks/bench_bucket_start.py``)."""


def mirror(uri: str) -> Path:
    """Bring the sealed files at ``uri`` into the local cache; return the cached store."""
    import pyarrow.fs as pafs

    fs, base = open_uri(uri)
    local = cache_root() / "stores" / uri_digest(uri)
    listed = time.time()
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
    missing = [rel for rel, size in wanted.items() if _size(local / rel) != size]
    if missing:
        with ThreadPoolExecutor(min(DOWNLOADS, len(missing)),
                                thread_name_prefix="footprint-mirror") as pool:
            list(pool.map(lambda rel: _download(fs, f"{base}/{rel}", local / rel), missing))
    _forget_gone(local, wanted, listed)
    return local


def _size(path: Path) -> int | None:
    """The size of a mirrored file (one ``stat``), ``None`` when it is not there."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _download(fs: Any, key: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # a name of this process's own: two readers on one cache never write one temp file
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.part")
    with fs.open_input_stream(key) as src, tmp.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.replace(tmp, target)


def _forget_gone(local: Path, wanted: dict[str, int], listed: float) -> None:
    """Remove the files gone from the bucket; not one another reader on this cache
    downloaded after this listing began (it is newer than the listing, not gone)."""
    for folder in SEALED:
        root = local / folder
        if not root.is_dir():
            continue
        for path in root.rglob("*.parquet"):
            if path.relative_to(local).as_posix() not in wanted:
                with contextlib.suppress(FileNotFoundError):
                    if path.stat().st_mtime < listed:
                        path.unlink()
