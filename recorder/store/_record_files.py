"""Writing chained record files: dataset versions and experiment results.

Each file (``recorder.store._records`` names where) is written whole, once, and
never rewritten: to a temporary name, then hard-linked to its final name (a
name already taken is refused, so two writers never overwrite each other) under
``<store>/records.lock`` (:func:`writing` and :func:`write_chained`, shared by both
kinds). Each file written is also listed in ``<store>/records.journal.jsonl``, one
chained line per file (its path, row count and last head), so ``footprint verify
--records`` (``recorder.store._record_verify``) can tell a deleted or replaced file
from one never written. Rows are chained as every record is: a row's ``head``
is ``SHA-256(previous head ‖ netstring(canonical JSON of the row))``; a dataset's
first version starts from the digest of ``footprint.dataset/1:<name>``, each later
version from the last head of the one before; an experiment from
``footprint.experiment/1:<name>``. :func:`check_chain` recomputes them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from footprint._errors import ConfigError
from recorder.store._catalog import Store
from recorder.write._chain import canonical_json, frame
from recorder.write._layout import resolve_store

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: record writers are not serialized
    fcntl = None  # type: ignore[assignment]

__all__ = ["JOURNAL", "Where", "Writing", "chain_rows", "check_chain", "check_name", "genesis",
           "journal_line", "locked", "read_rows", "root_of", "write_chained", "write_once",
           "writing"]

JOURNAL = "records.journal.jsonl"
"""Every record file written, one chained JSON line each, in written order."""

Where = Store | str | os.PathLike[str]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")


def check_name(name: object, what: str) -> str:
    """``name`` when it can name a file of the store (letters, digits, ``_ . -``)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".v" in name \
            or name.endswith("."):
        raise ConfigError(f"{what} name {name!r}: use 1-80 letters, digits, '_', '-' or '.' "
                          "(not '.v', not a trailing '.'), e.g. 'refund-failures'")
    return name


def root_of(where: Where) -> Path:
    """The store directory ``where`` names (it must exist)."""
    root = where.root if isinstance(where, Store) else resolve_store(where)
    if not root.is_dir():
        raise ConfigError(f"no footprint store at {str(root)!r}; record a run first, or "
                          "pass --store / set FOOTPRINT_STORE")
    return root


def genesis(kind: str, name: str) -> str:
    """The head a chain of ``kind`` records named ``name`` starts from."""
    return hashlib.sha256(f"footprint.{kind}/1:{name}".encode()).hexdigest()


def _link(prev: str, row: Mapping[str, Any]) -> str:
    body = canonical_json({k: v for k, v in row.items() if k not in ("prev_head", "head")})
    return hashlib.sha256(bytes.fromhex(prev) + frame(body.encode("utf-8"))).hexdigest()


def chain_rows(rows: Sequence[Mapping[str, Any]], start: str) -> list[dict[str, Any]]:
    """``rows`` with ``prev_head`` and ``head`` set, chained from ``start``."""
    out: list[dict[str, Any]] = []
    prev = start
    for row in rows:
        head = _link(prev, row)
        out.append({**row, "prev_head": prev, "head": head})
        prev = head
    return out


def check_chain(rows: Sequence[Mapping[str, Any]], start: str) -> str | None:
    """``None`` when ``rows`` chain from ``start``; else what breaks, naming the row."""
    prev = start
    for i, row in enumerate(rows):
        if row["prev_head"] != prev:
            return f"row {i} does not continue the chain (prev_head {row['prev_head'][:12]}…)"
        if _link(prev, row) != row["head"]:
            return f"row {i} was changed after it was written (its head does not match)"
        prev = row["head"]
    return None


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold ``<store>/records.lock``: one record writer at a time on this machine."""
    with open(root / "records.lock", "ab") as file:
        if fcntl is not None:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
        yield


def write_once(path: Path, rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> None:
    """Write ``rows`` to ``path`` as Parquet, refusing a path that exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), tmp)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise ConfigError(f"{str(path)!r} exists already: records are never rewritten; "
                          "pick another name") from None
    finally:
        tmp.unlink(missing_ok=True)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of one record file, in written order."""
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


@dataclass(frozen=True, slots=True)
class Writing:
    """An open record write: the store directory and the write's time stamp (ns)."""

    root: Path
    ts: int


@contextlib.contextmanager
def writing(where: Where, kind: str, name: str, at: int | None) -> Iterator[Writing]:
    """The preamble of every record write: the store found, the ``kind``'s ``name``
    checked, the time stamp taken (``at``, else now) and the records lock held."""
    root = root_of(where)
    check_name(name, kind)
    ts = time.time_ns() if at is None else at
    with locked(root):
        yield Writing(root, ts)


def write_chained(root: Path, path: Path, rows: Sequence[Mapping[str, Any]], start: str,
                  schema: pa.Schema) -> list[dict[str, Any]]:
    """Chain ``rows`` from ``start``, write them once to ``path`` and list the file in the
    journal (call under :func:`writing`); the chained rows."""
    chained = chain_rows(rows, start)
    write_once(path, chained, schema)
    _journal(root, path, chained, start)
    return chained


def journal_line(prev: str, entry: Mapping[str, Any]) -> str:
    """The hash of one journal line: ``prev`` and the entry's canonical JSON."""
    return _link(prev, {k: v for k, v in entry.items() if k != "line"})


def _journal(root: Path, path: Path, rows: Sequence[Mapping[str, Any]], start: str) -> None:
    journal = root / JOURNAL
    prev = genesis("journal", "records")
    if journal.exists():
        lines = journal.read_text(encoding="utf-8").splitlines()
        if lines:
            prev = json.loads(lines[-1])["line"]
    entry = {"path": path.relative_to(root).as_posix(), "rows": len(rows),
             "head": rows[-1]["head"] if rows else start, "prev": prev}
    with open(journal, "a", encoding="utf-8") as out:
        out.write(json.dumps({**entry, "line": journal_line(prev, entry)}) + "\n")
        out.flush()
        os.fsync(out.fileno())
