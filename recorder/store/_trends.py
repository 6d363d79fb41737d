"""``trends``: runs per time bucket (and group) — latency, tokens, errors, decisions, cost.

One pushed-down DuckDB aggregate over the per-file outlines
(``recorder.store._outline``), in one pass over their run rows (a file's
run row counts its decisions too): each run's latency (start to end), tokens,
status, model and decision count, grouped by a day or hour of its start and,
optionally, by model, skill or release. The runs are filtered by a
:class:`RunQuery` (its conditions on status, model and start run on these
rows; any other, such as the answer's text, through the runs list of
``recorder.store._runlist``). A skill groups the runs that activated
it (a run with two skills counts in both; ``skill.activated`` rows only are
read); a release is the run's ``run.start`` label. When the store's
``llm_calls`` view prices calls (a ``cost_usd`` column), a second aggregate
adds the runs' cost, from the outlines' call rows joined with the prices
(``recorder.store._costs``): ``cost_usd`` summed over priced runs, ``unpriced``
the runs with a call no price covers (never counted as 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

import pyarrow as pa

from footprint._errors import ConfigError, did_you_mean
from recorder.store._costs import priced_calls
from recorder.store._outline import outline_view
from recorder.store._runlist import RunQuery, _base

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["BUCKETS", "GROUPS", "METRICS", "TREND_COLUMNS", "TrendQuery", "priced", "trend_series",
           "trends"]

BUCKETS = ("day", "hour")
GROUPS = ("model", "skill", "release", "user", "tag", "env")
TREND_COLUMNS = ("bucket", "group", "runs", "failed", "error_rate", "p50_ms", "p90_ms",
                 "p99_ms", "tokens", "tokens_per_run", "decisions")
"""The columns of a :func:`trends` table; ``cost_usd`` and ``unpriced`` follow when the
store prices its model calls."""

_LABELS = {"release": "release", "user": "user_id", "env": "environment"}
"""The groupings by a ``run.start`` label, and its column on the outlines' run rows (each
file's first ``run.start`` with one; a run takes its earliest such file's): read in the
one pass over the run rows, no join."""


_KEYS: dict[str | None, tuple[str, str]] = {
    None: ("NULL::VARCHAR", ""),
    "model": ("m.model", "LEFT JOIN (SELECT run_id, model, (coalesce(sum(input_tokens), 0) + "
              "coalesce(sum(output_tokens), 0))::BIGINT AS tokens FROM calls "
              "GROUP BY run_id, model) m USING (run_id)"),
    "skill": ("k.skill_id", """LEFT JOIN (SELECT DISTINCT run_id, skill_id FROM _events_all
                                WHERE type = 'skill.activated') k USING (run_id)"""),
    **{name: ("p.label", "") for name in _LABELS},
    "tag": ("k.tag", """LEFT JOIN (SELECT DISTINCT run_id, unnest(coalesce(tags, [])) AS tag
                            FROM {view} WHERE level = 'run') k USING (run_id)"""),
}
"""Each grouping's key and the join that gives it. A run counts in every group it has a
key in (a run of two models, skills or tags counts in each); grouped by model, a group's
tokens and cost are those of its model's calls (``calls``: one row per model call), not
the whole run's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TrendQuery:
    """Which runs (``runs``: a :class:`RunQuery`, its paging ignored), bucketed ``by`` a
    ``'day'`` or ``'hour'`` of their start, split by ``group_by`` (``'model'``,
    ``'skill'``, ``'release'``, ``'user'``, ``'tag'``, ``'env'`` or ``None``)."""

    by: str = "day"
    group_by: str | None = None
    runs: RunQuery = field(default_factory=RunQuery)

    def __post_init__(self) -> None:
        if self.by not in BUCKETS:
            raise ConfigError(f"TrendQuery(by={self.by!r}): pick day or hour"
                              f"{did_you_mean(str(self.by), BUCKETS)}")
        if self.group_by is not None and self.group_by not in GROUPS:
            raise ConfigError(f"TrendQuery(group_by={self.group_by!r}): pick one of "
                              f"{', '.join(GROUPS)}{did_you_mean(str(self.group_by), GROUPS)}")
        if not isinstance(self.runs, RunQuery):
            raise ConfigError(f"TrendQuery(runs={self.runs!r}): pass a RunQuery")


_PER_RUN = """
per AS (
  SELECT run_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns, sum(ended) AS ended,
         sum(failed) AS failed,
         (coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0))::BIGINT AS tokens,
         arg_min(model, (model_rank, model_seq)) FILTER (WHERE model IS NOT NULL) AS model,
         coalesce(sum(decisions), 0) AS decisions{label}
  FROM {view} WHERE level = 'run' GROUP BY run_id),
per_run AS (
  SELECT run_id, start_ns, make_timestamp(start_ns // 1000) AS started,
         CASE WHEN ended > 0 THEN 'complete' WHEN failed > 0 THEN 'failed'
              ELSE 'incomplete' END AS status,
         tokens, model, decisions{carry}, (end_ns - start_ns) / 1e6 AS latency_ms
  FROM per),
picked AS (SELECT * FROM per_run WHERE {where}),{calls}
keyed AS (SELECT p.* REPLACE ({tokens} AS tokens), {key} AS grp FROM picked p {join})
SELECT date_trunc('{by}', started) AS bucket, grp AS "group", count(*) AS runs,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) FILTER (WHERE status = 'failed') / count(*) AS error_rate,
       quantile_cont(latency_ms, 0.5) AS p50_ms, quantile_cont(latency_ms, 0.9) AS p90_ms,
       quantile_cont(latency_ms, 0.99) AS p99_ms, sum(tokens)::BIGINT AS tokens,
       avg(tokens) AS tokens_per_run, sum(decisions)::BIGINT AS decisions{cost}
FROM keyed {cost_join} GROUP BY ALL ORDER BY bucket, "group" NULLS LAST
"""
"""Each run's numbers in one pass over its outline rows, then the buckets."""
_SIMPLE = frozenset({"status", "model", "since", "until", "run_ids", "newest_first", "limit",
                     "offset"})
"""The :class:`RunQuery` fields whose condition reads only ``runs``'s own columns."""


_COST = """LEFT JOIN (SELECT run_id, {model}sum(cost_usd) AS cost_usd,
                      count(*) FILTER (WHERE cost_usd IS NULL AND end_seq IS NOT NULL)
                          AS unpriced_calls
               FROM calls GROUP BY ALL) c ON c.run_id = keyed.run_id{on_model}"""
_COST_COLUMNS = (""",
       sum(c.cost_usd::DOUBLE) FILTER (WHERE coalesce(c.unpriced_calls, 0) = 0) AS cost_usd,
       count(*) FILTER (WHERE c.unpriced_calls > 0) AS unpriced""")


def priced(store: StoreView) -> bool:
    """Whether the store's ``llm_calls`` view prices calls (has a ``cost_usd`` column): read
    from the view's definition, so a store whose views were never used makes none for it."""
    from recorder.store import _views

    return "cost_usd" in dict(_views.VIEWS).get("llm_calls", "")


def trends(store: StoreView, query: TrendQuery | None = None) -> pa.Table:
    """One row per bucket (and group), oldest first: :data:`TREND_COLUMNS` (latencies in
    ms over ended runs; ``error_rate`` = failed / runs), plus cost when the store has it."""
    query = query or TrendQuery()
    where, params = query.runs.where()
    prefix = "WITH "
    if _needs_run_rows(query.runs):  # a filter on what only the runs list knows (answer, …)
        base, (listed, params) = _base(store, query.runs)
        prefix, where = base.rstrip() + ",", f"run_id IN (SELECT run_id FROM run_rows " \
            f"WHERE {listed})"
    key, join = _KEYS[query.group_by]
    view = outline_view(store)
    by_model = query.group_by == "model"
    calls, cost, cost_join = "", "", ""
    if priced(store):
        picked = None if where == "true" else "picked"  # no filter: every run's calls
        relation, more = priced_calls(store, view, picked)
        calls, params = f"\ncalls AS ({relation}),", [*params, *more]
        cost = _COST_COLUMNS
        cost_join = _COST.format(
            model="model, " if by_model else "",
            on_model=" AND c.model IS NOT DISTINCT FROM keyed.grp" if by_model else "")
    elif by_model:
        calls = f"\ncalls AS (SELECT * FROM {view} WHERE level = 'call'),"
    label = _LABELS.get(str(query.group_by))
    sql = prefix + _PER_RUN.format(
        view=view, where=where, key=key, join=join.format(view=view), by=query.by, calls=calls,
        label=f", arg_min({label}, first_seq) AS label" if label else "",
        carry=", label" if label else "",
        tokens="coalesce(m.tokens, p.tokens)" if by_model else "p.tokens",
        cost=cost, cost_join=cost_join)
    return store.arrow(sql, params)


def _needs_run_rows(runs: RunQuery) -> bool:
    plain = RunQuery()
    return any(getattr(runs, f.name) != getattr(plain, f.name) for f in fields(runs)
               if f.name not in _SIMPLE)


METRICS = (("p50_ms", "latency p50 (ms)"), ("p90_ms", "latency p90 (ms)"),
           ("tokens_per_run", "tokens per run"), ("error_rate", "error rate"),
           ("decisions_per_run", "decisions per run"), ("cost_usd", "cost (USD)"))
"""The plotted series: a :func:`trends` column (or ``decisions_per_run``), and its title."""


def trend_series(table: pa.Table, by: str = "day",
                 ) -> tuple[list[str], dict[str, dict[str, list[float | None]]]]:
    """The labels of the buckets (oldest first; ``by`` as the table was made) and, per
    metric of :data:`METRICS` the table has, one series per group (``'all'`` when
    ungrouped, ``'(none)'`` for the runs a grouping leaves out, e.g. with no skill),
    ``None`` where a group has no runs in a bucket or no value (e.g. no run ended)."""
    rows = table.to_pylist()
    stamps = sorted({r["bucket"] for r in rows})
    labels = [s.strftime("%m-%d %H:00" if by == "hour" else "%Y-%m-%d") for s in stamps]
    where = {s: i for i, s in enumerate(stamps)}
    none = "(none)" if any(r["group"] is not None for r in rows) else "all"
    groups = sorted({r["group"] or none for r in rows})
    out: dict[str, dict[str, list[float | None]]] = {}
    for metric, _title in METRICS:
        if metric != "decisions_per_run" and metric not in table.column_names:
            continue
        series: dict[str, list[float | None]] = {g: [None] * len(stamps) for g in groups}
        for r in rows:
            value = r["decisions"] / r["runs"] if metric == "decisions_per_run" else r[metric]
            series[r["group"] or none][where[r["bucket"]]] = value
        out[metric] = series
    return labels, out
