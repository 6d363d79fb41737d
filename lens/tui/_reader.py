"""The lens's reads of one run: small, paged DuckDB queries; typed events only for what is shown.

A thin adapter over :class:`recorder.Store` (DuckDB views over the store's
Parquet and live segments): every screen asks for the page it paints — an
iteration range, a list of seqs — never for the whole run. Every method may
run on a worker thread: the :class:`StoreGate` serialises the store's one
connection, and a call waiting for it gives up at once when the lens closes.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from footprint.events import ContextInjected, Event, LLMEnd, LLMStart, RunFailed, from_record
from lens.tui._model import Iteration, build_iteration, request_messages
from recorder import upcast
from recorder.store._prices import Prices, load_prices
from recorder.store._reader import matching_texts
from recorder.store._views import STEP_TYPES
from recorder.write._rows import BLOB_KEY, ENVELOPE_NAMES

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["Failure", "IterationHead", "Outline", "ReaderClosed", "RunReader", "StoreGate"]

_ENVELOPE = ", ".join(ENVELOPE_NAMES)
_CACHED_TEXTS = 2_000


class ReaderClosed(Exception):
    """The lens is closing: a read that has not started yet will not start."""


class StoreGate:
    """The store's one DuckDB connection, shared by the lens's workers one at a time."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = threading.Lock()
        self.closed = False
        self.abandon: Callable[[], bool] = lambda: False
        """Asked while waiting: ``True`` when the caller no longer wants the answer."""
        self.texts: OrderedDict[str, str] = OrderedDict()
        """Blob texts read lately (pieces repeat from iteration to iteration), bounded."""
        self.prices: Prices | None = None
        """The store's prices, read on first need (``recorder.store._prices``)."""

    @contextmanager
    def held(self) -> Iterator[Store]:
        """The store, exclusively; raises :class:`ReaderClosed` if the lens closes meanwhile."""
        while not self.lock.acquire(timeout=0.02):
            if self.closed or self.abandon():
                raise ReaderClosed("the lens is closing, or the read is no longer wanted")
        try:
            if self.closed or self.abandon():
                raise ReaderClosed("the lens is closing, or the read is no longer wanted")
            yield self.store
        finally:
            self.lock.release()

    def rows(self, query: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self.held() as store:
            return store.rows(query, params)

    def arrow(self, query: str, params: Sequence[object] = ()) -> pa.Table:
        with self.held() as store:
            return store.con.sql(store.ready(query), params=list(params)).to_arrow_table()

    def close(self) -> None:
        """Stop: waiting reads give up, a running query is interrupted."""
        self.closed = True
        with contextlib.suppress(Exception):  # closing must never fail
            self.store.con.interrupt()
        with contextlib.suppress(Exception):  # the SQL console's query, on its own connection
            self.store.interrupt()


@dataclass(frozen=True, slots=True)
class Outline:
    """A run's iterations (``numbers``, ascending) and each one's first and last seq."""

    numbers: Sequence[int]
    first_seq: Sequence[int]
    last_seq: Sequence[int]

    def __len__(self) -> int:
        return len(self.numbers)


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationHead:
    """What the iteration strip shows of one iteration, straight from the hot columns."""

    number: int
    moved: bool = False
    from_skill: str | None = None
    to_skill: str | None = None
    by: str | None = None
    tools: tuple[str, ...] = ()
    refusals: int = 0
    tokens: int = 0
    failed: bool = False
    """The run stopped on an error in this iteration."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """Why and where a failed run stopped: its ``run.error`` and the step it died in."""

    error: RunFailed
    step: str
    """The model or tool call still open when the run failed, else the engine's step."""

    @property
    def iteration(self) -> int:
        return self.error.iteration


_HEADS_SQL = """
SELECT iteration,
       arg_min(moved_by, seq) FILTER (WHERE type = 'context.evaluated'),
       arg_min(from_skill, seq) FILTER (WHERE type = 'context.evaluated'),
       arg_min(to_skill, seq) FILTER (WHERE type = 'context.evaluated'),
       list(tool_name ORDER BY seq) FILTER (WHERE type = 'tool.start'),
       count(*) FILTER (WHERE type = 'skill.rejected'),
       sum(coalesce(TRY_CAST(json_extract_string(payload, '$.input_tokens') AS BIGINT), 0)
           + coalesce(TRY_CAST(json_extract_string(payload, '$.output_tokens') AS BIGINT), 0))
           FILTER (WHERE type = 'llm.end'),
       bool_or(type = 'run.error')
FROM _events_all WHERE run_id = ? AND iteration BETWEEN ? AND ?
GROUP BY iteration
"""


class RunReader:
    """Paged reads of one run through a :class:`StoreGate`."""

    def __init__(self, gate: StoreGate, run_id: str) -> None:
        self.gate, self.run_id = gate, run_id

    # ── typed events, decoded only for the rows asked for ─────────────────────
    def events_where(self, condition: str, params: Sequence[object] = ()) -> list[Event]:
        """The run's events matching an SQL ``condition`` over ``_events_all``, in seq order."""
        rows = self.gate.rows(
            f"SELECT {_ENVELOPE}, payload FROM _events_all WHERE run_id = ? AND ({condition}) "
            "ORDER BY seq", [self.run_id, *params])
        payloads = [json.loads(r[-1]) for r in rows]
        texts = self._blob_texts(payloads)
        out: list[Event] = []
        seen: set[int] = set()
        for row, payload in zip(rows, payloads, strict=True):
            record = dict(zip(ENVELOPE_NAMES, row[:-1], strict=True))
            if record["seq"] in seen:
                continue
            seen.add(record["seq"])
            for key, value in payload.items():
                record[key] = _unblob(value, texts)
            out.append(from_record(upcast(record)))
        return out

    def events_at(self, seqs: Sequence[int]) -> list[Event]:
        """The events with these seqs (those that exist), in seq order."""
        wanted = sorted({int(s) for s in seqs})
        if not wanted:
            return []
        return self.events_where("seq BETWEEN ? AND ? AND seq IN ?",
                                 [wanted[0], wanted[-1], wanted])

    def _blob_texts(self, payloads: list[dict[str, Any]]) -> dict[str, str]:
        wanted = {v[BLOB_KEY] for p in payloads for v in p.values() if _is_ref(v)}
        cache = self.gate.texts
        texts = {h: cache[h] for h in wanted if h in cache}
        missing = sorted(wanted - texts.keys())
        if missing:
            found = self.gate.rows("SELECT hash, text FROM _blobs_all WHERE hash IN ?",
                                   [missing])
            texts.update(matching_texts(found))  # an edited copy: never shown
        for h, t in texts.items():
            cache[h] = t
            cache.move_to_end(h)
        while len(cache) > _CACHED_TEXTS:
            cache.popitem(last=False)
        return texts

    # ── the timeline ─────────────────────────────────────────────────────────
    def outline(self) -> Outline:
        """Every iteration's number and seq range: one grouped scan of two small columns."""
        table = self.gate.arrow(
            "SELECT iteration, min(seq) AS lo, max(seq) AS hi FROM _events_all "
            "WHERE run_id = ? AND iteration > 0 GROUP BY iteration ORDER BY iteration",
            [self.run_id])
        return Outline(table.column("iteration").to_pylist(), table.column("lo").to_pylist(),
                       table.column("hi").to_pylist())

    def heads(self, first: int, last: int) -> dict[int, IterationHead]:
        """The strip's facts for iterations ``first..last`` (numbers, inclusive)."""
        found: dict[int, IterationHead] = {}
        for number, by, src, dst, tools, refusals, tokens, failed in self.gate.rows(
                _HEADS_SQL, [self.run_id, first, last]):
            found[int(number)] = IterationHead(
                number=int(number), moved=by is not None, by=by, from_skill=src, to_skill=dst,
                tools=tuple(tools or ()), refusals=int(refusals or 0), tokens=int(tokens or 0),
                failed=bool(failed))
        return found

    def cost(self, it: Iteration, first_seq: int, last_seq: int) -> float | None:
        """USD of iteration ``it``'s model calls (``None``: a call's model is unpriced), priced
        as the ``llm_calls`` view prices them."""
        gate = self.gate
        if gate.prices is None:
            gate.prices = load_prices(gate.store.root)
        total = 0.0
        for end in self.events_where("type = 'llm.end' AND iteration = ? AND seq BETWEEN ? "
                                     "AND ?", [it.number, first_seq, last_seq]):
            assert isinstance(end, LLMEnd)
            price = gate.prices.price(end.model or (it.call.model if it.call else None))
            if price is None or end.input_tokens is None or end.output_tokens is None:
                return None
            total += price.cost(input_tokens=end.input_tokens, output_tokens=end.output_tokens,
                                cache_read=end.cache_read_tokens or 0,
                                cache_write=end.cache_write_tokens or 0,
                                provider=it.call.provider if it.call else None)
        return total

    def failure(self) -> Failure | None:
        """The run's failure (``None`` when it did not fail): the last ``run.error``, and
        the step it failed in, as the ``runs`` view's ``failed_step`` names it."""
        errors = [e for e in self.events_where("type = 'run.error'") if isinstance(e, RunFailed)]
        if not errors:
            return None
        error = errors[-1]
        last = self.gate.rows(
            f"SELECT type, step_id FROM _events_all WHERE run_id = ? AND seq < ? AND type IN "
            f"({STEP_TYPES}) ORDER BY seq DESC LIMIT 1", [self.run_id, error.seq])
        opened = bool(last) and last[0][0] in ("llm.start", "tool.start")
        return Failure(error=error, step=str(last[0][1]) if opened else error.step_id)

    def iteration_events(self, number: int, first_seq: int, last_seq: int) -> list[Event]:
        """One iteration's events, typed."""
        return self.events_where("iteration = ? AND seq BETWEEN ? AND ?",
                                 [number, first_seq, last_seq])

    def iteration(self, number: int, first_seq: int, last_seq: int) -> Iteration:
        """Iteration ``number`` shaped for the timeline: its events, plus the few it names."""
        events = self.iteration_events(number, first_seq, last_seq)
        mine = {e.seq for e in events}
        admitting = [e.admitted_by for e in events
                     if isinstance(e, ContextInjected) and e.admitted_by is not None
                     and e.admitted_by not in mine]
        call = next((e for e in events if isinstance(e, LLMStart)), None)
        messages = [dict(m) for m in request_messages(call) or ()]
        return build_iteration(number, events, self.lookups(admitting, messages))

    def lookups(self, seqs: Sequence[int], messages: Sequence[dict[str, Any]]) -> list[Event]:
        """The events with these ``seqs``, and those a request's ``messages`` may come from
        (tool results by call id, model turns by call id or text, the person)."""
        tool_ids = [str(m["tool_call_id"]) for m in messages
                    if m.get("role") == "tool" and m.get("tool_call_id")]
        call_ids = [str(c.get("id")) for m in messages if m.get("role") == "assistant"
                    for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
        said = [str(m.get("content") or "") for m in messages
                if m.get("role") == "assistant" and not m.get("tool_calls")]
        terms: list[tuple[str, list[object]]] = [
            ("seq IN ?", [sorted({int(s) for s in seqs})]),
            ("type = 'tool.end' AND tool_call_id IN ?", [tool_ids]),
            ("type = 'llm.end' AND iteration IN (SELECT iteration FROM _events_all WHERE "
             "run_id = ? AND type = 'tool.start' AND tool_call_id IN ?)", [self.run_id, call_ids]),
            ("type = 'llm.end' AND json_extract_string(payload, '$.content') IN ?", [said]),
            ("type = 'run.start'", [] if any(m.get("role") == "user" for m in messages) else [[]]),
        ]
        found: list[Event] = []
        for sql, params in terms:  # apart: an OR of them would defeat the pushdown
            if all(params) or not params:
                found += self.events_where(sql, params)
        return found

    # ── the decisions list ───────────────────────────────────────────────────
    def index(self) -> tuple[pa.Array, pa.DictionaryArray]:
        """Every event's seq and type, in seq order (two columns, a few MB for a million)."""
        table = self.gate.arrow(
            "SELECT seq, type FROM _events_all WHERE run_id = ? ORDER BY seq", [self.run_id])
        types = table.column("type").combine_chunks().dictionary_encode()
        return table.column("seq").combine_chunks(), types

    def rows_at(self, columns: str, seqs: Sequence[int]) -> list[tuple[Any, ...]]:
        """``columns`` (SQL, ``seq`` first) of the events with these seqs, in seq order."""
        wanted = sorted({int(s) for s in seqs})
        if not wanted:
            return []
        return self.gate.rows(
            f"SELECT {columns} FROM events WHERE run_id = ? AND seq BETWEEN ? AND ? "
            "AND seq IN ? ORDER BY seq", [self.run_id, wanted[0], wanted[-1], wanted])

    def payload(self, seq: int) -> str | None:
        found = self.gate.rows("SELECT payload FROM events WHERE run_id = ? AND seq = ?",
                               [self.run_id, seq])
        return str(found[0][0]) if found else None

    # ── the skills walk ──────────────────────────────────────────────────────
    def seqs_where(self, condition: str, params: Sequence[object] = ()) -> list[int]:
        """The seqs of the run's events matching ``condition``, ascending."""
        table = self.gate.arrow(
            f"SELECT seq FROM _events_all WHERE run_id = ? AND ({condition}) ORDER BY seq",
            [self.run_id, *params])
        return [int(s) for s in table.column("seq").to_pylist()]


def _is_ref(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get(BLOB_KEY), str)


def _unblob(value: object, texts: dict[str, str]) -> object:
    if _is_ref(value):
        digest = value[BLOB_KEY]  # type: ignore[index]
        return texts.get(digest, f"(blob {digest[:12]}… missing from the store)")
    return value
