"""``StoreReader``: read a run by need — paged, filtered, columnar, typed only on request.

A million-event run is never loaded whole. The reader asks DuckDB for the
rows of one run in seq windows (``seq BETWEEN a AND b`` plus the
:class:`~recorder.EventQuery` filters, all pushed down into the Parquet
scan), returns them as Arrow tables, and rebuilds typed events only for the
rows it is asked to decode::

    reader = StoreReader(store)
    outline = reader.summary(run_id)                    # iterations, counts, tokens
    page = reader.page(EventQuery(run_id=run_id, types=("llm.end",)), limit=50)
    events = reader.decode(page)                        # typed, blob text restored
    for batch in reader.batches(EventQuery(run_id=run_id), columns=("seq", "type")):
        ...                                             # bounded memory, seq order

Every method is safe to call from a worker thread that owns the reader's
store (one DuckDB connection per store: do not share a store between threads
that query at once).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import orjson
import pyarrow as pa

from footprint._errors import ConfigError
from footprint.events import Event, from_record
from recorder.store._base import StoreView
from recorder.store._damage import StoreWarning
from recorder.store._query import EventQuery, columns_sql
from recorder.store._summary import RunSummary, run_bounds, run_summary
from recorder.store._upcast import upcast
from recorder.write._extract import text_sha256
from recorder.write._rows import BLOB_KEY, ENVELOPE_NAMES

__all__ = ["DECODE_COLUMNS", "StoreReader", "decode_table", "matching_texts"]

DECODE_COLUMNS: tuple[str, ...] = (*ENVELOPE_NAMES, "payload")
"""The columns :meth:`StoreReader.decode` needs (``page``/``batches`` return them by default)."""

_BLOB_MARK = f'"{BLOB_KEY}"'
_WINDOW = 16_384
"""Most seqs per window when streaming a run (a quarter of a Parquet row group)."""


class StoreReader:
    """Paged, filtered, columnar reads of one store (see the module docstring)."""

    def __init__(self, store: StoreView) -> None:
        if not isinstance(store, StoreView):
            raise ConfigError(f"StoreReader({store!r}): pass a Store from open_store(path)")
        self.store = store
        self._summaries: dict[str, RunSummary] = {}

    # -- outline ------------------------------------------------------------------
    def summary(self, run_id: str, *, fresh: bool = False) -> RunSummary:
        """The run's outline: iterations with their seq ranges, counts per type, tokens.

        Kept per reader; ``fresh=True`` (or a new reader after ``store.refresh()``)
        reads it again, e.g. while the run is still being written.
        """
        if fresh or run_id not in self._summaries:
            self._summaries[run_id] = run_summary(self.store, run_id)
        return self._summaries[run_id]

    def count(self, query: EventQuery) -> int:
        """How many rows match ``query``."""
        where, params = query.where()
        return int(self.store.rows(f"SELECT count(*) FROM _events_all WHERE {where}",
                                   params)[0][0])

    # -- rows ----------------------------------------------------------------------
    def page(self, query: EventQuery, *, after_seq: int | None = None,
             before_seq: int | None = None, limit: int = 200,
             columns: tuple[str, ...] | None = DECODE_COLUMNS) -> pa.Table:
        """At most ``limit`` matching rows in seq order: the first ones after ``after_seq``,
        or (given ``before_seq``) the last ones before it. Keyset paging: pass the last
        (first) seq of one page to get the next (previous)."""
        if type(limit) is not int or limit < 1:
            raise ConfigError(f"page(limit={limit!r}): pass a positive int, e.g. limit=200")
        if after_seq is not None and before_seq is not None:
            raise ConfigError("page(): pass after_seq or before_seq, not both")
        select = columns_sql(_with_seq(columns))
        parts: list[pa.Table] = []
        got = 0
        backward = before_seq is not None
        for window in self._windows(query, after_seq, before_seq, _WINDOW,
                                    first=max(limit * 2, 256)):
            table = self._fetch(replace(query, seqs=window), select, desc=backward,
                                limit=limit - got)
            parts.append(table)
            got += table.num_rows
            if got >= limit:
                break
        if backward:
            parts = [p.take(pa.array(range(p.num_rows - 1, -1, -1))) for p in reversed(parts)]
        return _project(_concat(parts, select, self.store), columns)

    def batches(self, query: EventQuery, *, columns: tuple[str, ...] | None = DECODE_COLUMNS,
                window: int = _WINDOW) -> Iterator[pa.RecordBatch]:
        """Every matching row, in seq order, a seq window at a time (bounded memory)."""
        if type(window) is not int or window < 1:
            raise ConfigError(f"batches(window={window!r}): pass a positive int")
        select = columns_sql(_with_seq(columns))
        for span in self._windows(query, None, None, window):
            table = _project(self._fetch(replace(query, seqs=span), select), columns)
            yield from table.to_batches()

    def events(self, query: EventQuery, *, window: int = _WINDOW) -> Iterator[Event]:
        """Every matching row as a typed event, in seq order, decoded a window at a time."""
        for batch in self.batches(query, window=window):
            yield from self.decode(pa.Table.from_batches([batch]))

    def decode(self, rows: pa.Table) -> list[Event]:
        """Typed events for ``rows`` (a ``page``/``batches`` result with
        :data:`DECODE_COLUMNS`), blob references replaced by their text."""
        return decode_table(self.store, rows)

    # -- internals -------------------------------------------------------------------
    def _bounds(self, run_id: str) -> tuple[int, int, int]:
        known = self._summaries.get(run_id)
        if known is not None:
            return known.events, known.first_seq, known.last_seq
        return run_bounds(self.store, run_id)

    def _fetch(self, query: EventQuery, select: str, *, desc: bool = False,
               limit: int | None = None) -> pa.Table:
        where, params = query.where()
        sql = (f"SELECT {select} FROM _events_all WHERE {where} "
               f"ORDER BY seq{' DESC' if desc else ''}")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self.store.arrow(sql, params)

    def _windows(self, query: EventQuery, after: int | None, before: int | None,
                 size: int, first: int = 1024) -> Iterator[tuple[int, int]]:
        """Inclusive seq windows covering the run (and ``query.seqs``), in paging order.

        The first window holds ``first`` seqs and each next one four times as
        many, up to ``size``: the first rows come quickly, the rest in big reads.
        """
        events, lo, hi = self._bounds(query.run_id)
        if events == 0:
            return
        if query.seqs is not None:
            lo, hi = max(lo, query.seqs[0]), min(hi, query.seqs[1])
        if after is not None:
            lo = max(lo, after + 1)
        if before is not None:
            hi = min(hi, before - 1)
            while hi >= lo:
                step, first = min(first, size), first * 4
                yield max(lo, hi - step + 1), hi
                hi -= step
            return
        while lo <= hi:
            step, first = min(first, size), first * 4
            yield lo, min(hi, lo + step - 1)
            lo += step


def _with_seq(columns: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if columns is None else tuple(dict.fromkeys((*columns, "seq")))


def _project(table: pa.Table, columns: tuple[str, ...] | None) -> pa.Table:
    return table if columns is None else table.select(list(dict.fromkeys(columns)))


def _concat(parts: list[pa.Table], select: str, store: StoreView) -> pa.Table:
    if parts:
        return pa.concat_tables(parts)
    return store.arrow(f"SELECT {select} FROM _events_all WHERE false")


def decode_table(store: StoreView, rows: pa.Table) -> list[Event]:
    """Typed events for store rows holding the envelope columns and ``payload``."""
    missing = [c for c in DECODE_COLUMNS if c not in rows.column_names]
    if missing:
        raise ConfigError(f"decode() needs the columns {', '.join(DECODE_COLUMNS)}; "
                          f"{missing[0]!r} is missing — read with the default columns")
    envelopes = list(zip(*(rows.column(name).to_pylist() for name in ENVELOPE_NAMES),
                         strict=True))
    texts = rows.column("payload").to_pylist()
    payloads = [_loads(text, envelope) for text, envelope in zip(texts, envelopes, strict=True)]
    refs = {i for i, text in enumerate(texts) if payloads[i] is not None and _BLOB_MARK in text}
    found = blob_texts(store, [p for i in sorted(refs) if (p := payloads[i]) is not None])
    out: list[Event] = []
    for i, (envelope, record) in enumerate(zip(envelopes, payloads, strict=True)):
        if record is None:
            continue
        if i in refs:
            record = {key: _unblob(value, found) for key, value in record.items()}
        record.update(zip(ENVELOPE_NAMES, envelope, strict=True))
        try:
            out.append(from_record(upcast(record)))
        except ConfigError as exc:
            _unreadable(envelope, str(exc))
    return out


def _loads(text: str, envelope: tuple[Any, ...]) -> dict[str, Any] | None:
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        _unreadable(envelope, f"its payload is not JSON: {exc}")
        return None
    if not isinstance(payload, dict):
        _unreadable(envelope, "its payload is not a JSON object")
        return None
    return payload


def _unreadable(envelope: tuple[Any, ...], why: str) -> None:
    record = dict(zip(ENVELOPE_NAMES, envelope, strict=True))
    warnings.warn(
        f"skipping unreadable event seq {record['seq']!r} of run {record['run_id']!r} "
        f"({' '.join(why.split())[:160]}); `footprint verify` tells whether it was edited",
        StoreWarning, stacklevel=4)


BLOB_TEXTS = "SELECT hash, text FROM _blobs_all WHERE hash IN (SELECT unnest(?))"
"""``hash, text`` of every stored copy of the blobs named by the one list parameter."""


def blob_texts(store: StoreView, payloads: list[dict[str, Any]]) -> dict[str, str]:
    """``hash -> text`` of every blob the payloads reference (a copy that matches)."""
    wanted = sorted({v[BLOB_KEY] for p in payloads for v in p.values() if _is_ref(v)})
    if not wanted:
        return {}
    return matching_texts(store.rows(BLOB_TEXTS, [wanted]))


def matching_texts(copies: Iterable[tuple[Any, ...]]) -> dict[str, str]:
    """``hash -> text`` from stored ``(hash, text)`` copies, each hash's first copy whose text
    hashes to it: an edited copy is never read, whichever file the scan met first. Hashed
    here, for the few blobs a read asks for: within the noise of the read
    (tests/benchmarks/bench_blob_check.py); ``sha256`` in the SQL under an ``IN`` list
    measured 44 -> 125 ms for 20 of 50,000 blobs."""
    texts: dict[str, str] = {}
    for digest, text in copies:
        key = str(digest)
        if key not in texts and text_sha256(str(text)) == key:
            texts[key] = str(text)
    return texts


def _is_ref(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get(BLOB_KEY), str)


def _unblob(value: object, texts: dict[str, str]) -> object:
    if _is_ref(value):
        digest = value[BLOB_KEY]  # type: ignore[index]
        if digest not in texts:
            raise ConfigError(
                f"blob {digest!r} is referenced but missing from the store, or every "
                "stored copy of it was edited (`footprint doctor` names them); restore "
                "the store's blobs/ directory"
            )
        return texts[digest]
    return value
