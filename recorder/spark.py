"""The store's views on Apache Spark: the same names, columns and rows as DuckDB's.

The store is plain Hive-partitioned Parquet, so Spark reads it unchanged;
this module adds the catalog's views on top, written in Spark SQL::

    from pyspark.sql import SparkSession
    from recorder.spark import register_views

    spark = SparkSession.builder.getOrCreate()
    register_views(spark, "s3a://bucket/footprint")    # or a local directory
    spark.sql("SELECT run_id, status, tokens FROM runs").show()

Spark reads *sealed* data (``events/``, ``blobs/``, ``stats/``); events still
in a writer's live segment appear once the writer seals them (on close or
rotation). :data:`SPARK_VIEWS` holds the definitions, in the same order and
with the same names as :data:`recorder.VIEWS` (DuckDB); a test runs both over
one store and compares every view's rows. Set the session time zone to UTC
(``spark.sql.session.timeZone``) for ``started``/``ended`` to read as DuckDB's.
pyspark is not a dependency of footprint: install it to use this module.
"""

from __future__ import annotations

import os
from typing import Any

from recorder._layout import BLOBS, EVENTS, STATS
from recorder._views import DECISION_TYPES

__all__ = ["SPARK_VIEWS", "register_views"]

_ENV = "run_id, seq, ts, type, turn, iteration, step_id, parent_step"
_HOT = (
    "skill_id, from_skill, to_skill, moved_by, reason, injection_id, slot, flavor, "
    "tool_name, tool_call_id, model, content_hash, admitted_by, admitted_via"
)
_DECISIONS = ", ".join(f"'{t}'" for t in DECISION_TYPES)


def _str(alias: str, key: str) -> str:
    return f"get_json_object({alias}.payload, '$.{key}')"


def _text(alias: str, key: str) -> str:
    """A payload text field, with blob references resolved through ``blobs``."""
    return (
        f"coalesce((SELECT first(b.text) FROM blobs b WHERE b.hash = "
        f"get_json_object({alias}.payload, \"$.{key}['$blob']\")), "
        f"get_json_object({alias}.payload, '$.{key}'))"
    )


def _num(alias: str, key: str, sql_type: str = "BIGINT") -> str:
    return f"try_cast({_str(alias, key)} AS {sql_type})"


SPARK_VIEWS: tuple[tuple[str, str], ...] = (
    ("blobs", "SELECT hash, first(chars) AS chars, first(text) AS text "
              "FROM _blobs_all GROUP BY hash"),
    ("events", f"SELECT schema_version, {_ENV}, trace_id, span_id, {_HOT}, payload, "
               "prev_check, row_check, date FROM _events_all"),
    ("decisions", f"SELECT {_ENV}, {_HOT}, payload FROM events WHERE type IN ({_DECISIONS})"),
    ("injections", f"""
        SELECT e.run_id, e.seq, e.turn, e.iteration, e.step_id, e.injection_id, e.slot,
               e.flavor, e.content_hash, e.admitted_by, e.admitted_via, e.reason,
               {_num('e', 'position')} AS position,
               {_str('e', 'as_role')} AS as_role,
               {_str('e', 'content_summary')} AS content_summary,
               {_text('e', 'raw_content')} AS raw_content
        FROM events e WHERE e.type = 'context.injected'"""),
    ("llm_calls", f"""
        WITH s AS (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
                   FROM events WHERE type = 'llm.start'),
             e AS (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
                   FROM events WHERE type = 'llm.end')
        SELECT s.run_id, s.turn, s.iteration, s.step_id, s.seq AS start_seq, e.seq AS end_seq,
               {_str('s', 'provider')} AS provider,
               coalesce(e.model, s.model) AS model,
               {_str('s', 'brain_via')} AS brain_via,
               {_str('s', 'request_hash')} AS request_hash,
               {_num('e', 'input_tokens')} AS input_tokens,
               {_num('e', 'output_tokens')} AS output_tokens,
               {_str('e', 'stop_reason')} AS stop_reason,
               {_num('e', 'duration_ms', 'DOUBLE')} AS duration_ms,
               json_array_length(get_json_object(e.payload, '$.tool_calls')) AS tool_call_count,
               {_text('e', 'content')} AS content
        FROM s LEFT JOIN e ON e.run_id = s.run_id AND e.k = s.k"""),
    ("tool_calls", f"""
        SELECT s.run_id, s.turn, s.iteration, s.step_id, s.seq AS start_seq, e.seq AS end_seq,
               s.tool_name, s.tool_call_id,
               {_str('s', 'args')} AS args,
               {_str('e', 'status')} AS status,
               {_str('e', 'status_by')} AS status_by,
               try_cast({_str('e', 'error')} AS BOOLEAN) AS error,
               {_num('e', 'timeout_s', 'DOUBLE')} AS timeout_s,
               {_num('e', 'duration_ms', 'DOUBLE')} AS duration_ms,
               {_text('e', 'result')} AS result
        FROM (SELECT * FROM events WHERE type = 'tool.start') s
        LEFT JOIN (SELECT * FROM events WHERE type = 'tool.end') e
          ON e.run_id = s.run_id AND e.tool_call_id = s.tool_call_id"""),
    ("rejections", f"""
        SELECT run_id, seq, turn, iteration, step_id, skill_id AS requested_id,
               from_skill AS current_skill_id, reason, tool_call_id,
               {_str('events', 'allowed')} AS allowed,
               {_str('events', 'posture')} AS posture
        FROM events WHERE type = 'skill.rejected'"""),
    ("escalations", f"""
        SELECT run_id, seq, turn, iteration, step_id,
               {_num('events', 'after_refusals')} AS after_refusals,
               {_num('events', 'refusals')} AS refusals,
               {_str('events', 'from_provider')} AS from_provider,
               {_str('events', 'from_model')} AS from_model,
               {_str('events', 'to_provider')} AS to_provider,
               {_str('events', 'to_model')} AS to_model
        FROM events WHERE type = 'skill.escalated'"""),
    ("route_conflicts", f"""
        SELECT run_id, seq, turn, iteration, step_id, from_skill, to_skill AS winner_target,
               tool_name AS winner_tool, {_str('events', 'winner')} AS winner,
               {_str('events', 'losers')} AS losers,
               {_str('events', 'source')} AS source
        FROM events WHERE type = 'skill.route_conflict'"""),
    ("runs", f"""
        WITH a AS (
          SELECT run_id, min(ts) AS start_ns, count(*) AS events, max(seq) AS last_seq,
                 max(turn) + 1 AS turns, max(iteration) AS iterations,
                 max(ts) FILTER (WHERE type IN ('run.end', 'run.error')) AS end_ns,
                 bool_or(type = 'run.end') AS ended, bool_or(type = 'run.error') AS failed,
                 sum({_num('events', 'input_tokens')}) FILTER (WHERE type = 'llm.end') AS tin,
                 sum({_num('events', 'output_tokens')}) FILTER (WHERE type = 'llm.end') AS tout,
                 coalesce(min_by(model, seq) FILTER (WHERE type = 'run.configured'),
                          min_by(model, seq) FILTER (WHERE type = 'llm.start')) AS model,
                 max_by(payload, seq) FILTER (WHERE type = 'run.end') AS end_payload,
                 min_by(payload, seq) FILTER (WHERE type = 'run.start') AS start_payload
          FROM events GROUP BY run_id),
        d AS (
          SELECT run_id, sum(overflow) AS overflow, sum(processor_drops) AS processor_drops,
                 sum(sink_drops) AS sink_drops
          FROM (SELECT run_id, writer, max(overflow) AS overflow,
                       max(processor_drops) AS processor_drops, max(sink_drops) AS sink_drops
                FROM _stats_all GROUP BY run_id, writer) GROUP BY run_id)
        SELECT a.run_id, timestamp_micros(a.start_ns div 1000) AS started,
               timestamp_micros(a.end_ns div 1000) AS ended,
               CASE WHEN a.ended THEN 'complete' WHEN a.failed THEN 'failed'
                    ELSE 'incomplete' END AS status,
               a.turns, a.iterations, coalesce(a.tin, 0) + coalesce(a.tout, 0) AS tokens,
               coalesce(a.tin, 0) AS input_tokens, coalesce(a.tout, 0) AS output_tokens,
               coalesce((SELECT first(b.text) FROM blobs b WHERE b.hash =
                   get_json_object(a.end_payload, "$.final_content['$blob']")),
                   get_json_object(a.end_payload, '$.final_content')) AS answer,
               a.model, a.events, a.last_seq,
               coalesce(d.overflow, 0) AS dropped, coalesce(d.processor_drops, 0) AS filtered,
               coalesce(d.sink_drops, 0) AS mirror_dropped,
               get_json_object(a.start_payload, '$.user_id') AS user_id,
               get_json_object(a.start_payload, '$.session_id') AS session_id,
               get_json_object(a.start_payload, '$.conversation_id') AS conversation_id,
               coalesce(from_json(get_json_object(a.start_payload, '$.tags'), 'array<string>'),
                        CAST(array() AS array<string>)) AS tags,
               get_json_object(a.start_payload, '$.metadata') AS metadata,
               get_json_object(a.start_payload, '$.release') AS release,
               get_json_object(a.start_payload, '$.environment') AS environment,
               a.start_ns
        FROM a LEFT JOIN d USING (run_id)"""),
)
"""``(name, select)`` in Spark SQL, in the same order and with the same columns as DuckDB's."""


def _join(root: str, part: str) -> str:
    return root.rstrip("/") + "/" + part if "://" in root else os.path.join(root, part)


def _read(spark: Any, path: str, *, hive: bool) -> Any:
    if "://" not in path and not os.path.isdir(path):
        return None
    reader = spark.read.option("mergeSchema", "true")
    if hive:
        reader = reader.option("basePath", path)
    try:
        return reader.parquet(path)
    except Exception as exc:  # an absent folder: nothing sealed there yet
        if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
            return None
        raise


def register_views(spark: Any, path: str | os.PathLike[str]) -> list[str]:
    """Register the store at ``path`` (a directory or an ``s3a://``-style URI) as
    temporary views on ``spark``: the raw ``_events_all``, ``_blobs_all`` and
    ``_stats_all``, then every catalog view. Returns the catalog views' names."""
    root = os.fspath(path)
    raw = {"_events_all": (EVENTS, True), "_blobs_all": (BLOBS, False),
           "_stats_all": (STATS, False)}
    for name, (folder, hive) in raw.items():
        frame = _read(spark, _join(root, folder), hive=hive)
        if frame is None:
            frame = spark.createDataFrame([], _EMPTY[name])
        frame.createOrReplaceTempView(name)
    if "sink_drops" not in spark.table("_stats_all").columns:
        spark.sql("SELECT *, CAST(0 AS BIGINT) AS sink_drops FROM _stats_all") \
            .createOrReplaceTempView("_stats_all")
    for name, select in SPARK_VIEWS:
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {select}")
    return [name for name, _ in SPARK_VIEWS]


_EMPTY = {
    "_events_all": (
        "schema_version INT, run_id STRING, seq BIGINT, ts BIGINT, type STRING, turn BIGINT, "
        "iteration BIGINT, step_id STRING, parent_step STRING, trace_id STRING, span_id STRING, "
        "skill_id STRING, from_skill STRING, to_skill STRING, moved_by STRING, reason STRING, "
        "injection_id STRING, slot STRING, flavor STRING, tool_name STRING, "
        "tool_call_id STRING, model STRING, content_hash STRING, admitted_by BIGINT, "
        "admitted_via STRING, payload STRING, prev_check BIGINT, row_check BIGINT, date DATE"),
    "_blobs_all": "hash STRING, chars BIGINT, text STRING",
    "_stats_all": ("run_id STRING, writer STRING, overflow BIGINT, processor_drops BIGINT, "
                   "sink_drops BIGINT, written_ns BIGINT"),
}
