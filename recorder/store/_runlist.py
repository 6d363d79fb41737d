"""``list_runs``: the runs list at store scale — filtered, paged, from outlines, not events.

One row per run from the per-file outlines (``recorder.store._outline``) and the
recorder's drop counters; the filters (status, model, start date, answer
text) and the page (``limit``/``offset``) run in DuckDB, and blob-held
answers are fetched for the rows of the page only. ``footprint runs`` and
the lens's runs screen both read through :func:`list_runs`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from footprint._errors import ConfigError
from recorder.store._outline import outline_view
from recorder.store._reader import BLOB_TEXTS
from recorder.store._views import CALL_COST

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["RUN_COLUMNS", "STATUSES", "RunQuery", "count_runs", "list_runs"]

STATUSES = ("complete", "failed", "incomplete")
RUN_COLUMNS = ("run_id", "started", "ended", "status", "turns", "iterations", "tokens",
               "input_tokens", "output_tokens", "cost_usd", "unpriced_calls", "answer",
               "error_type", "error_message", "failed_step", "model", "events", "last_seq",
               "dropped", "filtered", "mirror_dropped", "start_ns")
"""The columns of a :func:`list_runs` table (those of the ``runs`` view)."""

Day = datetime.date | str


def _day(name: str, value: Day | None) -> datetime.date | None:
    if value is None or type(value) is datetime.date:
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    raise ConfigError(f"RunQuery({name}={value!r}): pass a date as YYYY-MM-DD, "
                      "e.g. 2026-01-31")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunQuery:
    """Which runs, and which page of them.

    ``status``: any of :data:`STATUSES` (empty: all); ``model``: a
    case-insensitive part of the model name; ``since``/``until``: UTC start
    days, inclusive (``date`` or ``"YYYY-MM-DD"``); ``answer``: a
    case-insensitive part of the final answer; ``run_ids``: only these runs
    (empty: all); ``newest_first`` orders by
    start time; ``limit``/``offset`` page the result.
    """

    status: tuple[str, ...] = ()
    model: str | None = None
    since: Day | None = None
    until: Day | None = None
    answer: str | None = None
    run_ids: tuple[str, ...] = ()
    newest_first: bool = True
    limit: int = 50
    offset: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.run_ids, str) or not all(isinstance(r, str) for r in self.run_ids):
            raise ConfigError(f"RunQuery(run_ids={self.run_ids!r}): pass a tuple of run ids")
        bad = [s for s in self.status if s not in STATUSES]
        if isinstance(self.status, str) or bad:
            raise ConfigError(f"RunQuery(status={self.status!r}): pick from "
                              f"{', '.join(STATUSES)}")
        for name in ("limit", "offset"):
            value = getattr(self, name)
            if type(value) is not int or value < 0 or value > 10**9:
                raise ConfigError(f"RunQuery({name}={value!r}): pass an int from 0 to 10^9")
        for name in ("model", "answer"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"RunQuery({name}={value!r}): pass text or None")
        since, until = _day("since", self.since), _day("until", self.until)
        if since is not None and until is not None and since > until:
            raise ConfigError(f"RunQuery(since={self.since!r}, until={self.until!r}): "
                              "since is after until; swap them")

    def where(self) -> tuple[str, list[object]]:
        """The ``WHERE`` condition over the run rows, and its parameters."""
        terms: list[str] = ["true"]
        params: list[object] = []
        if self.run_ids:
            terms.append("run_id IN ?")
            params.append(list(self.run_ids))
        if self.status:
            terms.append("status IN ?")
            params.append(list(self.status))
        if self.model:
            terms.append("model ILIKE ?")
            params.append(f"%{_like(self.model)}%")
        since, until = _day("since", self.since), _day("until", self.until)
        if since is not None:
            terms.append("start_ns >= ?")
            params.append(_ns(since))
        if until is not None:
            terms.append("start_ns < ?")
            params.append(_ns(until + datetime.timedelta(days=1)))
        if self.answer:
            terms.append("answer_text ILIKE ?")
            params.append(f"%{_like(self.answer)}%")
        return " AND ".join(terms), params


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _ns(day: datetime.date) -> int:
    return int(datetime.datetime(day.year, day.month, day.day,
                                 tzinfo=datetime.UTC).timestamp()) * 10**9


_RUNS = """
WITH o AS (SELECT * FROM {view}),
r AS (
  SELECT run_id, sum(events) FILTER (WHERE level = 'run')::BIGINT AS events,
         max(last_seq) AS last_seq, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
         sum(ended) AS ended, sum(failed) AS failed,
         coalesce(sum(input_tokens), 0)::BIGINT AS input_tokens,
         coalesce(sum(output_tokens), 0)::BIGINT AS output_tokens,
         first(model ORDER BY model_rank NULLS LAST, model_seq) AS model,
         arg_max(answer, answer_seq) AS answer, arg_max(answer_blob, answer_seq) AS answer_blob,
         arg_max(error_type, error_seq) AS error_type,
         arg_max(error_message, error_seq) AS error_message,
         arg_max(error_blob, error_seq) AS error_blob,
         arg_max(failed_step, error_seq) AS failed_step,
         max(iteration) FILTER (WHERE level = 'iteration') AS iterations,
         max(turn) FILTER (WHERE level = 'iteration') + 1 AS turns
  FROM o GROUP BY run_id),
d AS (
  SELECT run_id, sum(overflow) AS overflow, sum(processor_drops) AS processor_drops,
         sum(sink_drops) AS sink_drops
  FROM (SELECT run_id, writer, max(overflow) AS overflow,
               max(processor_drops) AS processor_drops, max(sink_drops) AS sink_drops
        FROM _stats_all GROUP BY run_id, writer) GROUP BY run_id),
run_rows AS (
  SELECT r.run_id, make_timestamp(r.start_ns // 1000) AS started,
         make_timestamp(r.end_ns // 1000) AS ended,
         CASE WHEN r.ended > 0 THEN 'complete' WHEN r.failed > 0 THEN 'failed'
              ELSE 'incomplete' END AS status,
         r.turns, r.iterations, r.input_tokens + r.output_tokens AS tokens,
         r.input_tokens, r.output_tokens, r.answer, r.answer_blob,
         CASE WHEN r.ended = 0 AND r.failed > 0 THEN r.error_type END AS error_type,
         CASE WHEN r.ended = 0 AND r.failed > 0 THEN r.error_message END AS error_message,
         CASE WHEN r.ended = 0 AND r.failed > 0 THEN r.error_blob END AS error_blob,
         CASE WHEN r.ended = 0 AND r.failed > 0 THEN r.failed_step END AS failed_step,
         r.model, r.events,
         r.last_seq, coalesce(d.overflow, 0)::BIGINT AS dropped,
         coalesce(d.processor_drops, 0)::BIGINT AS filtered,
         coalesce(d.sink_drops, 0)::BIGINT AS mirror_dropped, r.start_ns,
         {answer_text} AS answer_text
  FROM r LEFT JOIN d USING (run_id))
"""
def count_runs(store: StoreView, query: RunQuery | None = None) -> int:
    """How many runs match ``query`` (paging ignored)."""
    query = query or RunQuery()
    base, (where, params) = _base(store, query)
    return int(store.rows(f"{base} SELECT count(*) FROM run_rows WHERE {where}", params)[0][0])


def _base(store: StoreView, query: RunQuery) -> tuple[str, tuple[str, list[object]]]:
    text = ("coalesce((SELECT first(b.text) FROM _blobs_all b WHERE b.hash = r.answer_blob), "
            "r.answer)"
            if query.answer else "r.answer")
    return _RUNS.format(view=outline_view(store), answer_text=text), query.where()


def list_runs(store: StoreView, query: RunQuery | None = None, *, costs: bool = True
              ) -> pa.Table:
    """One row per matching run (:data:`RUN_COLUMNS`), one page of them, as Arrow;
    ``costs=False`` leaves ``cost_usd``/``unpriced_calls`` ``NULL`` (they read the page's
    model calls, a scan of each run's calls: ``footprint show`` prices as it streams)."""
    query = query or RunQuery()
    base, (where, params) = _base(store, query)
    order = "DESC" if query.newest_first else "ASC"
    table = store.arrow(
        f"{base} SELECT * EXCLUDE (answer_text) FROM run_rows WHERE {where} "
        f"ORDER BY start_ns {order}, run_id {order} LIMIT {query.limit} OFFSET {query.offset}",
        params)
    table = _with_blobs(store, table, "answer", "answer_blob")
    table = _with_blobs(store, table, "error_message", "error_blob")
    if not costs:
        empty = pa.nulls(table.num_rows)
        table = table.append_column("cost_usd", empty.cast(pa.float64())).append_column(
            "unpriced_calls", empty.cast(pa.int64()))
        return table.select(list(RUN_COLUMNS))
    return _with_costs(store, table).select(list(RUN_COLUMNS))


def _tokens(key: str) -> str:
    return f"TRY_CAST(json_extract_string(payload, '$.{key}') AS BIGINT) AS {key}"


_COSTS = f"""
WITH s AS (SELECT run_id, seq, model, json_extract_string(payload, '$.provider') AS provider,
                  row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
           FROM _events_all WHERE type = 'llm.start' AND run_id IN ?),
     e AS (SELECT run_id, seq, model, {_tokens('input_tokens')}, {_tokens('output_tokens')},
                  {_tokens('cache_read_tokens')}, {_tokens('cache_write_tokens')},
                  row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
           FROM _events_all WHERE type = 'llm.end' AND run_id IN ?),
     c AS (SELECT s.run_id, e.seq AS end_seq, s.provider, coalesce(e.model, s.model) AS model,
                  e.input_tokens, e.output_tokens, e.cache_read_tokens, e.cache_write_tokens
           FROM s LEFT JOIN e ON e.run_id = s.run_id AND e.k = s.k),
     priced AS (SELECT c.run_id, c.end_seq, {CALL_COST} AS cost_usd
                FROM c LEFT JOIN prices p ON p.model = c.model)
SELECT run_id, sum(cost_usd),
       count(*) FILTER (WHERE cost_usd IS NULL AND end_seq IS NOT NULL)
FROM priced GROUP BY run_id
"""
"""The page's runs' costs, priced as the ``llm_calls`` view prices each call (the same
pairing and :data:`CALL_COST`), from the raw events of those runs only: a filter on the
view would come after its window over every run's calls."""


def _with_costs(store: StoreView, table: pa.Table) -> pa.Table:
    """``cost_usd`` (``NULL`` when a call's model is unpriced) and ``unpriced_calls`` for
    the runs of the page (as the ``runs`` view has them)."""
    ids = table.column("run_id").to_pylist()
    found = {r[0]: (r[1], int(r[2])) for r in store.rows(_COSTS, [ids, ids])} if ids else {}
    unpriced = [found.get(i, (None, 0))[1] for i in ids]
    cost = [None if u else (found.get(i, (None, 0))[0] or 0.0) for i, u in zip(ids, unpriced,
                                                                                strict=True)]
    return table.append_column("cost_usd", pa.array(cost, pa.float64())).append_column(
        "unpriced_calls", pa.array(unpriced, pa.int64()))


def _with_blobs(store: StoreView, table: pa.Table, column: str, blob: str) -> pa.Table:
    """``column`` filled from the blob table where the run's text was stored there."""
    digests = [d for d in table.column(blob).to_pylist() if d]
    if not digests:
        return table
    texts = dict(store.rows(BLOB_TEXTS, [digests]))
    held = pa.array([texts.get(d) if d else None
                     for d in table.column(blob).to_pylist()], pa.string())
    import pyarrow.compute as pc  # ~60 ms to import: only when needed
    filled = pc.coalesce(held, table.column(column))
    return table.set_column(table.schema.get_field_index(column), column, filled)
