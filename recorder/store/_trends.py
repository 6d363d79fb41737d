"""``trends``: runs per time bucket (and group) — latency, tokens, errors, decisions, cost.

One pushed-down DuckDB aggregate over the run rows of the runs list
(``recorder.store._runlist``, themselves built from the per-file outlines):
each run's latency (start to end), tokens and status, and its decision count
from the outlines' per-type rows, grouped by a day or hour of its start and,
optionally, by model, skill or release. A skill groups the runs that activated
it (a run with two skills counts in both; ``skill.activated`` rows only are
read); a release is the run's ``run.start`` label. When the store's
``llm_calls`` view prices calls (a ``cost_usd`` column), a second aggregate
adds the runs' cost: ``cost_usd`` summed over priced runs, ``unpriced`` the
runs with a call no price covers (never counted as 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from footprint._errors import ConfigError, did_you_mean
from recorder.store._runlist import RunQuery, _base
from recorder.store._views import DECISION_TYPES

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["BUCKETS", "GROUPS", "METRICS", "TREND_COLUMNS", "TrendQuery", "priced", "trend_series",
           "trends"]

BUCKETS = ("day", "hour")
GROUPS = ("model", "skill", "release")
TREND_COLUMNS = ("bucket", "group", "runs", "failed", "error_rate", "p50_ms", "p90_ms",
                 "p99_ms", "tokens", "tokens_per_run", "decisions")
"""The columns of a :func:`trends` table; ``cost_usd`` and ``unpriced`` follow when the
store prices its model calls."""

_DECISIONS = ", ".join(f"'{t}'" for t in DECISION_TYPES)
_KEYS = {
    None: ("NULL::VARCHAR", ""),
    "model": ("p.model", ""),
    "skill": ("k.skill_id", """LEFT JOIN (SELECT DISTINCT run_id, skill_id FROM _events_all
                                WHERE type = 'skill.activated') k USING (run_id)"""),
    "release": ("k.release", """LEFT JOIN (SELECT run_id, arg_min(try(json_extract_string(
                                  payload, '$.release')), seq) AS release FROM _events_all
                                WHERE type = 'run.start' GROUP BY run_id) k USING (run_id)"""),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class TrendQuery:
    """Which runs (``runs``: a :class:`RunQuery`, its paging ignored), bucketed ``by`` a
    ``'day'`` or ``'hour'`` of their start, split by ``group_by`` (``'model'``,
    ``'skill'``, ``'release'`` or ``None``)."""

    by: str = "day"
    group_by: str | None = None
    runs: RunQuery = field(default_factory=RunQuery)

    def __post_init__(self) -> None:
        if self.by not in BUCKETS:
            raise ConfigError(f"TrendQuery(by={self.by!r}): pick day or hour"
                              f"{did_you_mean(str(self.by), BUCKETS)}")
        if self.group_by is not None and self.group_by not in GROUPS:
            raise ConfigError(f"TrendQuery(group_by={self.group_by!r}): pick model, skill or "
                              f"release{did_you_mean(str(self.group_by), GROUPS)}")
        if not isinstance(self.runs, RunQuery):
            raise ConfigError(f"TrendQuery(runs={self.runs!r}): pass a RunQuery")


_SELECT = """,
picked AS (SELECT run_id, started, status, tokens, model,
                  (epoch_us(ended) - epoch_us(started)) / 1000.0 AS latency_ms
           FROM run_rows WHERE {where}),
dec AS (SELECT run_id, sum(events)::BIGINT AS decisions FROM o
        WHERE level = 'type' AND type IN ({decisions}) GROUP BY run_id),
keyed AS (SELECT p.*, coalesce(dec.decisions, 0) AS decisions, {key} AS grp
          FROM picked p LEFT JOIN dec USING (run_id) {join})
SELECT date_trunc('{by}', started) AS bucket, grp AS "group", count(*) AS runs,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) FILTER (WHERE status = 'failed') / count(*) AS error_rate,
       quantile_cont(latency_ms, 0.5) AS p50_ms, quantile_cont(latency_ms, 0.9) AS p90_ms,
       quantile_cont(latency_ms, 0.99) AS p99_ms, sum(tokens)::BIGINT AS tokens,
       avg(tokens) AS tokens_per_run, sum(decisions)::BIGINT AS decisions{cost}
FROM keyed {cost_join} GROUP BY ALL ORDER BY bucket, "group" NULLS LAST
"""
_COST = """LEFT JOIN (SELECT run_id, sum(cost_usd) AS cost_usd,
                      count(*) FILTER (WHERE cost_usd IS NULL AND end_seq IS NOT NULL)
                          AS unpriced_calls
               FROM llm_calls WHERE run_id IN (SELECT run_id FROM picked)
               GROUP BY run_id) c USING (run_id)"""
_COST_COLUMNS = (""",
       sum(c.cost_usd::DOUBLE) FILTER (WHERE coalesce(c.unpriced_calls, 0) = 0) AS cost_usd,
       count(*) FILTER (WHERE c.unpriced_calls > 0) AS unpriced""")


def priced(store: StoreView) -> bool:
    """Whether the store's ``llm_calls`` view prices calls (has ``cost_usd``)."""
    return "cost_usd" in store.arrow("SELECT * FROM llm_calls LIMIT 0").column_names


def trends(store: StoreView, query: TrendQuery | None = None) -> pa.Table:
    """One row per bucket (and group), oldest first: :data:`TREND_COLUMNS` (latencies in
    ms over ended runs; ``error_rate`` = failed / runs), plus cost when the store has it."""
    query = query or TrendQuery()
    base, (where, params) = _base(store, query.runs)
    key, join = _KEYS[query.group_by]
    with_cost = priced(store)
    sql = base.rstrip() + _SELECT.format(
        where=where, decisions=_DECISIONS, key=key, join=join, by=query.by,
        cost=_COST_COLUMNS if with_cost else "", cost_join=_COST if with_cost else "")
    return store.arrow(sql, params)


METRICS = (("p50_ms", "latency p50 (ms)"), ("p90_ms", "latency p90 (ms)"),
           ("tokens_per_run", "tokens per run"), ("error_rate", "error rate"),
           ("decisions_per_run", "decisions per run"), ("cost_usd", "cost (USD)"))
"""The plotted series: a :func:`trends` column (or ``decisions_per_run``), and its title."""


def trend_series(table: pa.Table) -> tuple[list[str], dict[str, dict[str, list[float | None]]]]:
    """The buckets' labels (oldest first) and, per metric of :data:`METRICS` the table
    has, one series per group (``'all'`` when ungrouped), ``None`` where a group has no
    runs in a bucket or no value (e.g. no run ended)."""
    rows = table.to_pylist()
    hourly = any(r["bucket"].hour for r in rows)
    stamps = sorted({r["bucket"] for r in rows})
    labels = [s.strftime("%m-%d %H:00" if hourly else "%Y-%m-%d") for s in stamps]
    where = {s: i for i, s in enumerate(stamps)}
    groups = sorted({r["group"] or "all" for r in rows})
    out: dict[str, dict[str, list[float | None]]] = {}
    for metric, _title in METRICS:
        if metric != "decisions_per_run" and metric not in table.column_names:
            continue
        series: dict[str, list[float | None]] = {g: [None] * len(stamps) for g in groups}
        for r in rows:
            value = r["decisions"] / r["runs"] if metric == "decisions_per_run" else r[metric]
            series[r["group"] or "all"][where[r["bucket"]]] = value
        out[metric] = series
    return labels, out
