"""Files the lens writes into a user's tree (a snapshot folder, its test module, a decision
snapshot): never through a symbolic link, never outside the folder meant, and atomically
(a temporary file in the same folder, then ``os.replace``), so a link planted at the path
cannot redirect the write and a crash leaves the old file or the new one."""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from footprint._errors import ConfigError

__all__ = ["real_folder", "write_text_safely"]


def real_folder(parent: Path, name: str) -> Path:
    """``parent / name`` made (with ``parent``) and checked to be a folder of its own there:
    not a link, nor anything that resolves elsewhere."""
    folder = parent / name
    parent.mkdir(parents=True, exist_ok=True)
    _refuse_odd(folder, stat.S_ISDIR, "a folder")
    folder.mkdir(exist_ok=True)
    if folder.resolve() != parent.resolve() / name:
        raise ConfigError(f"{str(folder)!r} resolves to {str(folder.resolve())!r}, outside "
                          f"{str(parent)!r}; remove it or pick another --name")
    return folder


def write_text_safely(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) at ``path`` atomically, refusing a link or a non-file there."""
    info = _refuse_odd(path, stat.S_ISREG, "a regular file")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode) if info else 0o644)
        os.replace(tmp, path)  # a rename replaces a link planted since, never writes through it
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _refuse_odd(path: Path, kind: Callable[[int], bool], what: str) -> os.stat_result | None:
    """``path``'s own status (``None``: nothing there); a symbolic link there, or anything
    but ``what``, is a ``ConfigError`` naming the path and the fix."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise ConfigError(f"{str(path)!r} is a symbolic link (to {os.readlink(path)!r}); "
                          "footprint writes nothing through a link: remove it (rm "
                          f"{shlex.quote(str(path))}) and run again")
    if not kind(info.st_mode):
        raise ConfigError(f"{str(path)!r} is not {what}; move it away and run again")
    return info
