"""``list_runs``: the runs list at store scale — filtered, paged, from outlines, not events.

One row per run from the per-file outlines (``recorder.store._outline``) and the
recorder's drop counters, each page's answers and statuses checked against
the record (``recorder.store._runcheck``); the filters (status, model, start date, answer
text) and the page (``limit``/``offset``) run in DuckDB, and blob-held
answers are fetched for the rows of the page only. ``footprint runs`` and
the lens's runs screen both read through :func:`list_runs`.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from footprint._errors import ConfigError, did_you_mean
from recorder.store._filters import (
    WHERE_KEYS,
    parse_score,
    parse_since,
    parse_until,
    parse_where,
)
from recorder.store._outline import outline_view
from recorder.store._views import CALL_COST

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["RUN_COLUMNS", "STATUSES", "RunQuery", "count_runs", "list_runs", "run_costs",
           "unknown_scores"]

STATUSES = ("complete", "failed", "incomplete")
RUN_COLUMNS = ("run_id", "started", "ended", "status", "turns", "iterations", "tokens",
               "input_tokens", "output_tokens", "cost_usd", "unpriced_calls", "answer",
               "error_type", "error_message", "failed_step", "model", "events", "last_seq",
               "dropped", "filtered", "mirror_dropped", "start_ns", "user_id", "session_id",
               "tags", "release", "environment", "scores")
"""The columns of a :func:`list_runs` table (those of the ``runs`` view; ``scores`` maps
each score name to its latest value)."""

Since = datetime.datetime | datetime.date | str
_LABELS = (("user", "user_id"), ("session", "session_id"), ("release", "release"),
           ("environment", "environment"))


def _texts(name: str, value: object, example: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, tuple | list) or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"RunQuery({name}={value!r}): pass a tuple of non-empty texts, "
                          f"e.g. {name}=({example!r},)")
    return tuple(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunQuery:
    """Which runs, and which page of them.

    ``status``: any of :data:`STATUSES` (empty: all); ``model``: a
    case-insensitive part of the model name; ``since``: started at or after
    a day, a moment or an age (``"2h"``, ``"7d"``; ``recorder.store._filters``);
    ``until``: started on or before a day (the whole day), a moment or an
    age; ``answer``: a case-insensitive part of the final answer; ``user``,
    ``session``, ``release``, ``environment``: that label exactly; ``tags``: runs
    carrying every one of these tags;
    ``scores``: score filters such as ``"helpful<1"`` over each score's latest
    value (all must hold); ``run_ids``: only these runs (empty: all);
    ``newest_first`` orders by start time; ``limit``/``offset`` page the result.
    :meth:`from_where` builds one from a ``key=value`` text or mapping.
    """

    status: tuple[str, ...] = ()
    model: str | None = None
    since: Since | None = None
    until: Since | None = None
    answer: str | None = None
    user: str | None = None
    session: str | None = None
    tags: tuple[str, ...] = ()
    release: str | None = None
    environment: str | None = None
    scores: tuple[str, ...] = ()
    run_ids: tuple[str, ...] = ()
    newest_first: bool = True
    limit: int = 50
    offset: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.run_ids, str) or not all(isinstance(r, str) for r in self.run_ids):
            raise ConfigError(f"RunQuery(run_ids={self.run_ids!r}): pass a tuple of run ids")
        bad = [s for s in self.status if s not in STATUSES]
        if isinstance(self.status, str) or bad:
            hint = did_you_mean(bad[0], STATUSES) if bad else ""
            raise ConfigError(f"RunQuery(status={self.status!r}): pick from "
                              f"{', '.join(STATUSES)}{hint}")
        for name in ("limit", "offset"):
            value = getattr(self, name)
            if type(value) is not int or value < 0 or value > 10**9:
                raise ConfigError(f"RunQuery({name}={value!r}): pass an int from 0 to 10^9")
        for name in ("model", "answer", "user", "session", "release", "environment"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"RunQuery({name}={value!r}): pass text or None")
        _texts("tags", self.tags, "beta")
        for text in _texts("scores", self.scores, "helpful<1"):
            parse_score(text)
        since, until = parse_since(self.since), parse_until(self.until)
        if since is not None and until is not None and since >= until:
            raise ConfigError(f"RunQuery(since={self.since!r}, until={self.until!r}): "
                              "since is after until; swap them")

    @classmethod
    def from_where(cls, where: str | Mapping[str, object], **page: Any) -> RunQuery:
        """A query from ``"release=1.4 tag=beta score=helpful<1"`` (``_filters.WHERE_KEYS``)
        or the same as a mapping (a value may be a list for ``tag``/``status``/``score``);
        ``page`` passes ``limit``, ``offset``, ``newest_first``, ``run_ids``."""
        return cls(**{**page, **_where_fields(where)})

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
        self._labels(terms, params)
        self._times(terms, params)
        if self.answer:
            terms.append("answer_text ILIKE ?")
            params.append(f"%{_like(self.answer)}%")
        return " AND ".join(terms), params

    def narrowing(self, view: str) -> tuple[str, list[object]]:
        """A ``WHERE`` over the outline rows that keeps only runs that may match, from the
        label, tag, score and id filters (each outline row is small and columnar, so this
        is cheap), so that only those runs are aggregated; :meth:`where` still decides."""
        terms: list[str] = []
        params: list[object] = []
        labels: list[str] = []
        self._labels(labels, params, scores=False)
        if labels:
            terms.append(f"run_id IN (SELECT run_id FROM {view} WHERE level = 'run' AND "
                         f"{' AND '.join(labels)})")
        for text in self.scores:
            condition, values = parse_score(text).sql("type", "score_value", "score_label")
            terms.append(f"run_id IN (SELECT run_id FROM {view} WHERE level = 'score' AND "
                         f"{condition})")
            params.extend(values)
        if self.run_ids:
            terms.append("run_id IN ?")
            params.append(list(self.run_ids))
        return (" WHERE " + " AND ".join(terms) if terms else ""), params

    def _labels(self, terms: list[str], params: list[object], *, scores: bool = True) -> None:
        for name, column in _LABELS:
            value = getattr(self, name)
            if value is not None:
                terms.append(f"{column} = ?")
                params.append(value)
        if self.tags:
            terms.append("list_has_all(tags, ?::VARCHAR[])")
            params.append(list(self.tags))
        for text in self.scores if scores else ():
            condition, values = parse_score(text).sql()
            terms.append(f"run_id IN (SELECT run_id FROM s WHERE {condition})")
            params.extend(values)

    def _times(self, terms: list[str], params: list[object]) -> None:
        since, until = parse_since(self.since), parse_until(self.until)
        if since is not None:
            terms.append("start_ns >= ?")
            params.append(_ns(since))
        if until is not None:
            terms.append("start_ns < ?")
            params.append(_ns(until))


_WHERE_FIELDS = {"tag": "tags", "env": "environment", "score": "scores"}


def _where_fields(where: str | Mapping[str, object]) -> dict[str, Any]:
    """The :class:`RunQuery` fields a where text or mapping sets."""
    terms: Mapping[str, object] = parse_where(where) if isinstance(where, str) else where
    if not isinstance(terms, Mapping):
        raise ConfigError(f"where={where!r}: pass text such as 'release=1.4' or a mapping")
    fields: dict[str, Any] = {}
    for key, raw in terms.items():
        if key not in WHERE_KEYS:
            raise ConfigError(f"where key {key!r} is unknown{did_you_mean(key, WHERE_KEYS)}; "
                              f"use one of {', '.join(WHERE_KEYS)}")
        given = raw if isinstance(raw, list | tuple) else [raw]
        if not given or any(v is None for v in given):
            raise ConfigError(f"where={{{key!r}: {raw!r}}}: give the {key} to keep (e.g. "
                              f"{{{key!r}: 'x'}}), or leave {key!r} out to keep every run")
        values = [str(v) for v in given]
        field = _WHERE_FIELDS.get(key, key)
        fields[field] = tuple(values) if field in ("tags", "status", "scores") else values[-1]
    return fields


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _ns(moment: datetime.datetime) -> int:
    return int(moment.timestamp() * 10**6) * 1000


_RUNS = """
WITH o AS MATERIALIZED (SELECT * FROM (SELECT * FROM {view} WHERE level <> 'call'){narrow}),
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
         max(turn) FILTER (WHERE level = 'iteration') + 1 AS turns,
         max(user_id) AS user_id, max(session_id) AS session_id, max(tags) AS tags,
         max(release) AS release, max(environment) AS environment
  FROM o GROUP BY run_id),
s AS (
  SELECT run_id, type AS name, arg_max(score_value, last_seq) AS value,
         arg_max(score_label, last_seq) AS label
  FROM o WHERE level = 'score' GROUP BY run_id, type),
sc AS (
  SELECT run_id, map_from_entries(list(struct_pack(k := name, v := value) ORDER BY name)
                                  FILTER (WHERE value IS NOT NULL)) AS scores
  FROM s GROUP BY run_id),
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
         r.user_id, r.session_id, coalesce(r.tags, []::VARCHAR[]) AS tags, r.release,
         r.environment, sc.scores, {answer_text} AS answer_text
  FROM r LEFT JOIN d USING (run_id) LEFT JOIN sc USING (run_id))
"""


def _merged(query: RunQuery | None, where: str | Mapping[str, object] | None) -> RunQuery:
    """``query`` (or the default) with the filters ``where`` sets on top."""
    query = query or RunQuery()
    return query if where is None else dataclasses.replace(query, **_where_fields(where))


def count_runs(store: StoreView, query: RunQuery | None = None, *,
               where: str | Mapping[str, object] | None = None) -> int:
    """How many runs match ``query`` (paging ignored)."""
    query = _merged(query, where)
    base, (where, params) = _base(store, query)
    return int(store.rows(f"{base} SELECT count(*) FROM run_rows WHERE {where}", params)[0][0])


def unknown_scores(store: StoreView, query: RunQuery) -> tuple[list[str], list[str]]:
    """The score names ``query`` filters on that no run of the store has, and the names
    runs have (so "no runs match" can tell a misspelt score from a filter nothing meets)."""
    wanted = [parse_score(text).name for text in query.scores]
    if not wanted:
        return [], []
    known = sorted(str(name) for (name,) in store.rows(
        f"SELECT DISTINCT type FROM {outline_view(store)} WHERE level = 'score'"))
    return [name for name in dict.fromkeys(wanted) if name not in known], known


def _base(store: StoreView, query: RunQuery) -> tuple[str, tuple[str, list[object]]]:
    """The runs CTEs (outline rows narrowed to the runs that may match) and the ``WHERE``
    that decides; the parameters of both, in the order they appear."""
    text = ("coalesce((SELECT first(b.text) FROM _blobs_all b WHERE b.hash = r.answer_blob "
            "AND sha256(b.text) = b.hash), r.answer)"  # an edited copy: never read
            if query.answer else "r.answer")
    view = outline_view(store)
    narrow, first = query.narrowing(view)
    where, then = query.where()
    return _RUNS.format(view=view, narrow=narrow, answer_text=text), (where, first + then)


def list_runs(store: StoreView, query: RunQuery | None = None, *,
              where: str | Mapping[str, object] | None = None, costs: bool = True
              ) -> pa.Table:
    """One row per matching run (:data:`RUN_COLUMNS`), one page of them, as Arrow.

    ``where`` sets filters in the ``key=value`` form (:meth:`RunQuery.from_where`)
    on top of ``query`` (or the default query). ``costs=False`` leaves
    ``cost_usd``/``unpriced_calls`` ``NULL`` (they read the page's model calls, a scan of
    each run's calls: ``footprint show`` prices as it streams)."""
    from recorder.store._runcheck import checked_against_record

    query = _merged(query, where)
    base, (where, params) = _base(store, query)
    order = "DESC" if query.newest_first else "ASC"
    table = store.arrow(
        f"{base} SELECT * EXCLUDE (answer_text) FROM run_rows WHERE {where} "
        f"ORDER BY start_ns {order}, run_id {order} LIMIT {query.limit} OFFSET {query.offset}",
        params)
    table = _with_blobs(store, checked_against_record(store, table), "answer", "answer_blob")
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


def run_costs(store: StoreView, run_ids: list[str]) -> dict[str, tuple[float | None, int]]:
    """Each run's ``(cost_usd, unpriced_calls)``, as :func:`list_runs` has them: the USD of
    its model calls, ``None`` when a call's model is unpriced (never a made-up 0), and how
    many calls are unpriced. Reads only those runs' model calls (the lens prices the runs
    it lists a block at a time); a run with no model call costs 0."""
    ids = list(run_ids)
    found = {r[0]: (r[1], int(r[2])) for r in store.rows(_COSTS, [ids, ids])} if ids else {}
    out: dict[str, tuple[float | None, int]] = {}
    for run_id in ids:
        cost, unpriced = found.get(run_id, (None, 0))
        out[run_id] = (None if unpriced else (cost or 0.0), unpriced)
    return out


def _with_costs(store: StoreView, table: pa.Table) -> pa.Table:
    """``cost_usd`` (``NULL`` when a call's model is unpriced) and ``unpriced_calls`` for
    the runs of the page (as the ``runs`` view has them)."""
    ids = table.column("run_id").to_pylist()
    costs = run_costs(store, ids)
    return table.append_column(
        "cost_usd", pa.array([costs[i][0] for i in ids], pa.float64())).append_column(
        "unpriced_calls", pa.array([costs[i][1] for i in ids], pa.int64()))


def _with_blobs(store: StoreView, table: pa.Table, column: str, blob: str) -> pa.Table:
    """``column`` filled from the blob table where the run's text was stored there."""
    digests = [d for d in table.column(blob).to_pylist() if d]
    if not digests:
        return table
    from recorder.store._reader import BLOB_TEXTS, matching_texts  # only when needed

    texts = matching_texts(store.rows(BLOB_TEXTS, [digests]))
    held = pa.array([texts.get(d) if d else None
                     for d in table.column(blob).to_pylist()], pa.string())
    import pyarrow.compute as pc  # ~60 ms to import: only when needed
    filled = pc.coalesce(held, table.column(column))
    return table.set_column(table.schema.get_field_index(column), column, filled)
