"""Damaged store files: found, named once, and left out — the rest stays queryable.

Three kinds of damage, three places they are caught:

* a file whose footer cannot be read, or whose columns have the wrong types
  (a stray Parquet file whose ``seq`` is text), or a live segment written
  in another schema: at discovery (``recorder.store._discover``), from the footer;
* a file damaged inside its data (a flipped bit under an intact footer, a
  byte that is not UTF-8): only reading it shows it. When a store query
  fails, :func:`guarded` finds the file (DuckDB names it, or every sealed
  file is read through once), leaves it out, and runs the query again.

Each damaged file produces one :class:`StoreWarning` naming it, per store;
``footprint doctor`` lists them and can move them to ``quarantine/``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import duckdb
import pyarrow as pa

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["StoreWarning", "file_problem", "guarded", "schema_problem", "warn_damaged"]

T = TypeVar("T")


class StoreWarning(UserWarning):
    """A store file could not be read and was skipped (the rest stays queryable)."""


_FAMILIES: tuple[tuple[str, Callable[[pa.DataType], bool]], ...] = (
    ("text", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)
     or pa.types.is_string_view(t)),
    ("integer", pa.types.is_integer),
    ("bytes", lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t)
     or pa.types.is_fixed_size_binary(t)),
    ("date", pa.types.is_date),
)


def _family(kind: pa.DataType) -> str:
    return next((name for name, test in _FAMILIES if test(kind)), str(kind))


def schema_problem(found: pa.Schema, expected: pa.Schema, required: Iterable[str]) -> str | None:
    """Why a file with columns ``found`` cannot stand in a table of ``expected``, or ``None``.

    A known column must keep its kind of type (text, integer, bytes); the
    ``required`` ones must be there. Unknown extra columns are allowed.
    """
    for name in required:
        if name not in found.names:
            return f"column {name!r} is missing"
    if found.equals(expected):  # the usual case, settled at once (metadata aside)
        return None
    known = {n.lower(): n for n in expected.names}
    for field in found:
        near = known.get(field.name.lower())
        if near is not None and near != field.name:
            return f"column {field.name!r} is not {near!r}"
        if field.name in expected.names:
            want = expected.field(field.name).type
            if _family(field.type) != _family(want):
                return f"column {field.name!r} is {field.type}, not {want}"
    return None


def warn_damaged(path: Path, why: str, *, stacklevel: int = 3) -> None:
    """The one warning for a damaged file."""
    warnings.warn(
        f"skipping unreadable store file {str(path)!r} ({why}); every other file stays "
        "queryable — run `footprint doctor --quarantine` to move it aside",
        StoreWarning, stacklevel=stacklevel)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}"


def file_problem(con: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """Read every value of Parquet file ``path`` once; what went wrong, or ``None``."""
    quoted = "'" + str(path).replace("'", "''") + "'"
    try:
        reader = con.sql(f"SELECT * FROM read_parquet({quoted})").to_arrow_reader(65_536)
        for _ in reader:
            pass
    except (duckdb.Error, OSError, pa.ArrowException) as exc:
        return _one_line(exc)
    return None


_QUERY_ERRORS = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException,
                 duckdb.SyntaxException, duckdb.InterruptException,
                 duckdb.PermissionException, duckdb.NotImplementedException)
"""Errors of the query itself, never of a file: raised as they are."""


def _culprits(store: StoreView, message: str) -> dict[Path, str]:
    """The sealed files behind a failed query: the ones it names, else any that fail a read."""
    files = [*store.files.events, *store.files.blobs, *store.files.chain, *store.files.stats,
             *store.outlines.in_use]
    named = [p for p in files if str(p) in message]
    found: dict[Path, str] = {}
    for path in named or files:
        why = file_problem(store.con, path)
        if why is not None:
            found[path] = why
    return found


def _vanished(store: StoreView) -> bool:
    """Whether a file the last scan found is gone (a compactor merged it since)."""
    f = store.files
    return any(not p.exists() for p in (*f.events, *f.blobs, *f.chain, *f.stats,
                                        *store.outlines.in_use))


def guarded(store: StoreView, action: Callable[[], T], *, rescan: bool = True) -> T:
    """``action()``; when it fails on a damaged file, leave the file out and try again
    (after ``store.refresh()``, unless ``rescan`` is off: the action rescans itself)."""
    for _ in range(16):
        try:
            return action()
        except duckdb.Error as exc:
            if isinstance(exc, _QUERY_ERRORS):
                raise
            if _vanished(store):  # merged by a compactor, or re-sealed: read anew, no harm
                if rescan:
                    store.refresh()
                continue
            found = _culprits(store, str(exc))
            if not found:
                raise
            for path, why in found.items():
                if store.outlines.owns(path):  # derived: rebuilt, never a loss
                    store.outlines.discard(path, why)
                    continue
                store.damaged[path] = why
                warn_damaged(path, why, stacklevel=4)
            if rescan:
                store.refresh()
            if store.outlines.owns_any(found):
                store.outlined = False
                store.outlines.view(store)
    return action()
