"""Damage inside one row: a payload that is not JSON, or no longer matches its row check.

A flipped bit under an intact page (the file reads back whole) changes one
record of one run. It is confined there: the catalog's views read such a
payload as ``NULL`` (``recorder.store._views.tried``), ``verify`` names that
run broken (:func:`where` gives the file and row), and ``footprint doctor``
lists each such row (:func:`bad_rows`) with the run it belongs to.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import orjson
import pyarrow as pa

from recorder.store._damage import guarded

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["DamagedRow", "bad_rows", "where"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DamagedRow:
    """One record whose payload is damaged: its file, its row there, its run and seq."""

    path: Path
    row: int
    run_id: str
    seq: int
    reason: str


def _quoted(paths: Iterable[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def where(store: StoreView, run_id: str, seq: int) -> str:
    """Where the run's record ``seq`` is stored: ``file F, row N`` (row 0 the first), or
    ``a live segment`` (not sealed yet), or ``no file`` (a copy left out as damaged)."""
    files = store.files.events
    if not files:
        return "a live segment" if store.files.live_events else "no readable file"

    def find() -> list[tuple[str, int]]:
        return store.con.execute(
            f"SELECT filename, file_row_number FROM read_parquet({_quoted(files)}, "
            "union_by_name = true, filename = true, file_row_number = true) "
            "WHERE run_id = ? AND seq = ? ORDER BY filename, file_row_number",
            [run_id, seq]).fetchall()

    try:
        found = guarded(store, find)
    except duckdb.Error:
        return "an unreadable file"
    if not found:
        return "a live segment" if store.files.live_events else "no readable file"
    return "; ".join(f"file {name}, row {row}" for name, row in found)


def _problem(payload: str | None, check: int | None) -> str | None:
    if payload is None:
        return "the payload is missing"
    if check is None:
        return "the record has no row check (not as a footprint writer stores it)"
    if zlib.crc32(payload.encode("utf-8")) != check:
        return "the payload no longer matches its row check"
    try:
        orjson.loads(payload)
    except orjson.JSONDecodeError:
        try:
            json.loads(payload)
        except ValueError:
            return "the payload is not JSON"
    return None


def bad_rows(con: duckdb.DuckDBPyConnection, path: Path) -> list[DamagedRow]:
    """Every record of events file ``path`` whose payload is not JSON or fails its row
    check (streamed, a batch at a time). A file that does not read raises ``duckdb.Error``
    (the caller lists it as a damaged file)."""
    quoted = _quoted([path])[1:-1]
    names = {r[0] for r in con.execute(
        f"DESCRIBE SELECT * FROM read_parquet({quoted})").fetchall()}
    check = "row_check" if "row_check" in names else "NULL::BIGINT"
    reader = con.sql(f"SELECT run_id, seq, payload, {check} FROM read_parquet({quoted})"
                     ).to_arrow_reader(8192)
    found, row = [], 0
    for batch in reader:
        columns: list[pa.Array] = batch.columns
        for run_id, seq, payload, crc in zip(*(c.to_pylist() for c in columns), strict=True):
            why = _problem(payload, crc)
            if why is not None:
                found.append(DamagedRow(path=path, row=row, run_id=str(run_id),
                                        seq=int(seq), reason=why))
            row += 1
    return found
