"""``list_runs``: the runs list at store scale — filtered, paged, from outlines, not events.

One row per run from the per-file outlines (``recorder.store._outline``) and the
recorder's drop counters, each page's answers and statuses checked against
the record (``recorder.store._runcheck``); the filters (status, model, start date, answer
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
from recorder.store._runcheck import checked_against_record

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["RUN_COLUMNS", "STATUSES", "RunQuery", "count_runs", "list_runs"]

STATUSES = ("complete", "failed", "incomplete")
RUN_COLUMNS = ("run_id", "started", "ended", "status", "turns", "iterations", "tokens",
               "input_tokens", "output_tokens", "answer", "model", "events", "last_seq",
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
         r.input_tokens, r.output_tokens, r.answer, r.answer_blob, r.model, r.events,
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


def list_runs(store: StoreView, query: RunQuery | None = None) -> pa.Table:
    """One row per matching run (:data:`RUN_COLUMNS`), one page of them, as Arrow."""
    query = query or RunQuery()
    base, (where, params) = _base(store, query)
    order = "DESC" if query.newest_first else "ASC"
    table = store.arrow(
        f"{base} SELECT * EXCLUDE (answer_text) FROM run_rows WHERE {where} "
        f"ORDER BY start_ns {order}, run_id {order} LIMIT {query.limit} OFFSET {query.offset}",
        params)
    return _with_answers(store, checked_against_record(store, table)).select(list(RUN_COLUMNS))


def _with_answers(store: StoreView, table: pa.Table) -> pa.Table:
    """``answer`` filled from the blob table where the run's answer was stored there."""
    digests = [d for d in table.column("answer_blob").to_pylist() if d]
    if not digests:
        return table
    texts = dict(store.rows(BLOB_TEXTS, [digests]))
    held = pa.array([texts.get(d) if d else None
                     for d in table.column("answer_blob").to_pylist()], pa.string())
    import pyarrow.compute as pc  # ~60 ms to import: only when needed
    answer = pc.coalesce(held, table.column("answer"))
    return table.set_column(table.schema.get_field_index("answer"), "answer", answer)
