"""The catalog's SQL views over the store's two raw relations (``_events_all``, ``_blobs_all``)."""

from __future__ import annotations

import re

__all__ = ["BLOB_MATCHES", "CACHE_APART", "CALL_COST", "DECISION_TYPES", "FAILED_STEP",
           "PLAIN_VIEWS", "STEP_TYPES", "VIEWS", "tried"]

DECISION_TYPES = (
    "context.evaluated", "route.decided", "skill.activated", "skill.deactivated",
    "skill.rejected", "skill.escalated", "skill.route_conflict", "skill.reroute_superseded",
    "skill.turn_routed", "skill.step_advanced", "skill.step_skipped", "skill.steps_unfinished",
    "tool.effect",
)

CACHE_APART = ("anthropic",)
"""Providers whose recorded input tokens leave cache reads and writes out."""
STEP_TYPES = "'llm.start', 'llm.end', 'tool.start', 'tool.end'"
"""The events that open or close a model or tool call (SQL list)."""
FAILED_STEP = "CASE WHEN {kind} IN ('llm.start', 'tool.start') THEN {last} ELSE {error} END"
"""The failing step of a failed run: the model or tool call the run died in (its start is
the last step event), else the engine step that raised (``run.error``'s own step)."""

_READ = "coalesce(c.cache_read_tokens, 0)"
_WRITE = "coalesce(c.cache_write_tokens, 0)"
CALL_COST = f"""CASE WHEN c.end_seq IS NOT NULL THEN (
            CASE WHEN c.provider IN ({", ".join(f"'{p}'" for p in CACHE_APART)}) THEN c.input_tokens
                 ELSE greatest(c.input_tokens - {_READ} - {_WRITE}, 0) END * p.input_mtok
            + {_READ} * coalesce(p.cache_read_mtok, p.input_mtok)
            + {_WRITE} * coalesce(p.cache_write_mtok, p.input_mtok)
            + c.output_tokens * p.output_mtok) / 1000000.0 END"""
"""USD of one model call (``NULL`` when its model is unpriced, or it never replied)."""

BLOB_MATCHES = "sha256(text) = hash"
"""A stored blob copy whose text hashes to its key (``recorder.write._extract.text_sha256``):
an edited copy is never read. DuckDB pushes a lookup's hashes into the scan, so only the
copies looked up are hashed (tests/benchmarks/bench_blob_check.py)."""

_ENV = "run_id, seq, ts, type, turn, iteration, step_id, parent_step"
_HOT = (
    "skill_id, from_skill, to_skill, moved_by, reason, injection_id, slot, flavor, "
    "tool_name, tool_call_id, model, content_hash, admitted_by, admitted_via"
)
_DECISIONS = ", ".join(f"'{t}'" for t in DECISION_TYPES)


def _text(alias: str, key: str) -> str:
    """A payload text field, with blob references resolved through ``blobs``."""
    return (
        f"coalesce((SELECT b.text FROM blobs b WHERE b.hash = "
        f"json_extract_string({alias}.payload, '$.{key}.\"$blob\"')), "
        f"json_extract_string({alias}.payload, '$.{key}'))"
    )


def _num(alias: str, key: str, sql_type: str = "BIGINT") -> str:
    return f"TRY_CAST(json_extract_string({alias}.payload, '$.{key}') AS {sql_type})"


PLAIN_VIEWS: tuple[tuple[str, str], ...] = (
    ("blobs", "SELECT hash, any_value(chars) AS chars, any_value(text) AS text "
              f"FROM _blobs_all WHERE {BLOB_MATCHES} GROUP BY hash"),
    ("events", f"SELECT schema_version, {_ENV}, trace_id, span_id, {_HOT}, payload, "
               "prev_check, row_check, date "
               "FROM _events_all"),
    ("decisions", f"SELECT {_ENV}, {_HOT}, payload FROM events WHERE type IN ({_DECISIONS})"),
    ("injections", f"""
        SELECT e.run_id, e.seq, e.turn, e.iteration, e.step_id, e.injection_id, e.slot,
               e.flavor, e.content_hash, e.admitted_by, e.admitted_via, e.reason,
               {_num('e', 'position')} AS position,
               json_extract_string(e.payload, '$.as_role') AS as_role,
               json_extract_string(e.payload, '$.content_summary') AS content_summary,
               {_text('e', 'raw_content')} AS raw_content
        FROM events e WHERE e.type = 'context.injected'"""),
    ("prices", "SELECT model, input_mtok, output_mtok, cache_read_mtok, cache_write_mtok, "
               "source, tiered FROM _prices"),
    ("llm_calls", f"""
        WITH s AS (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
                   FROM events WHERE type = 'llm.start'),
             e AS (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
                   FROM events WHERE type = 'llm.end'),
             c AS (
        SELECT s.run_id, s.turn, s.iteration, s.step_id, s.seq AS start_seq, e.seq AS end_seq,
               json_extract_string(s.payload, '$.provider') AS provider,
               coalesce(e.model, s.model) AS model,
               json_extract_string(s.payload, '$.brain_via') AS brain_via,
               json_extract_string(s.payload, '$.request_hash') AS request_hash,
               {_num('e', 'input_tokens')} AS input_tokens,
               {_num('e', 'output_tokens')} AS output_tokens,
               {_num('e', 'cache_read_tokens')} AS cache_read_tokens,
               {_num('e', 'cache_write_tokens')} AS cache_write_tokens,
               json_extract_string(e.payload, '$.stop_reason') AS stop_reason,
               {_num('e', 'duration_ms', 'DOUBLE')} AS duration_ms,
               json_array_length(json_extract(e.payload, '$.tool_calls')) AS tool_call_count,
               {_text('e', 'content')} AS content
        FROM s LEFT JOIN e ON e.run_id = s.run_id AND e.k = s.k)
        SELECT c.*, {CALL_COST} AS cost_usd
        FROM c LEFT JOIN _prices p ON p.model = c.model"""),
    ("tool_calls", f"""
        SELECT s.run_id, s.turn, s.iteration, s.step_id, s.seq AS start_seq, e.seq AS end_seq,
               s.tool_name, s.tool_call_id,
               json_extract(s.payload, '$.args') AS args,
               json_extract_string(e.payload, '$.status') AS status,
               json_extract_string(e.payload, '$.status_by') AS status_by,
               TRY_CAST(json_extract_string(e.payload, '$.error') AS BOOLEAN) AS error,
               {_num('e', 'timeout_s', 'DOUBLE')} AS timeout_s,
               {_num('e', 'duration_ms', 'DOUBLE')} AS duration_ms,
               {_text('e', 'result')} AS result
        FROM (SELECT * FROM events WHERE type = 'tool.start') s
        LEFT JOIN (SELECT * FROM events WHERE type = 'tool.end') e
          ON e.run_id = s.run_id AND e.tool_call_id = s.tool_call_id"""),
    ("rejections", """
        SELECT run_id, seq, turn, iteration, step_id, skill_id AS requested_id,
               from_skill AS current_skill_id, reason, tool_call_id,
               json_extract(payload, '$.allowed') AS allowed,
               json_extract_string(payload, '$.posture') AS posture
        FROM events WHERE type = 'skill.rejected'"""),
    ("escalations", f"""
        SELECT run_id, seq, turn, iteration, step_id,
               {_num('events', 'after_refusals')} AS after_refusals,
               {_num('events', 'refusals')} AS refusals,
               json_extract_string(payload, '$.from_provider') AS from_provider,
               json_extract_string(payload, '$.from_model') AS from_model,
               json_extract_string(payload, '$.to_provider') AS to_provider,
               json_extract_string(payload, '$.to_model') AS to_model
        FROM events WHERE type = 'skill.escalated'"""),
    ("route_conflicts", """
        SELECT run_id, seq, turn, iteration, step_id, from_skill, to_skill AS winner_target,
               tool_name AS winner_tool, json_extract(payload, '$.winner') AS winner,
               json_extract(payload, '$.losers') AS losers,
               json_extract_string(payload, '$.source') AS source
        FROM events WHERE type = 'skill.route_conflict'"""),
    ("run_sources", """
        SELECT run_id, json_extract_string(payload, '$.source') AS source,
               json_extract_string(payload, '$.framework') AS framework,
               json_extract_string(payload, '$.dialect') AS dialect,
               json_extract_string(payload, '$.fidelity') AS fidelity,
               json_extract_string(payload, '$.foreign_trace_id') AS foreign_trace_id,
               json_extract(payload, '$.unknown') AS unknown,
               json_extract(payload, '$.flagged') AS flagged
        FROM events WHERE type = 'run.source'"""),
    ("scores", f"""
        SELECT e.run_id, e.seq, e.ts, make_timestamp(e.ts // 1000) AS at,
               json_extract_string(e.payload, '$.name') AS name,
               {_num('e', 'value', 'DOUBLE')} AS value,
               json_extract_string(e.payload, '$.label') AS label,
               {_text('e', 'comment')} AS comment,
               json_extract_string(e.payload, '$.by') AS given_by
        FROM events e WHERE e.type = 'feedback.recorded'"""),
    ("runs", f"""
        WITH a AS (
          SELECT run_id, min(ts) AS start_ns, count(*) AS events, max(seq) AS last_seq,
                 max(turn) + 1 AS turns, max(iteration) AS iterations,
                 max(ts) FILTER (WHERE type IN ('run.end', 'run.error')) AS end_ns,
                 bool_or(type = 'run.end') AS ended, bool_or(type = 'run.error') AS failed,
                 sum({_num('events', 'input_tokens')}) FILTER (WHERE type = 'llm.end') AS tin,
                 sum({_num('events', 'output_tokens')}) FILTER (WHERE type = 'llm.end') AS tout,
                 coalesce(arg_min(model, seq) FILTER (WHERE type = 'run.configured'),
                          arg_min(model, seq) FILTER (WHERE type = 'llm.start')) AS model,
                 arg_max(payload, seq) FILTER (WHERE type = 'run.end') AS end_payload,
                 arg_min(payload, seq) FILTER (WHERE type = 'run.start') AS start_payload,
                 arg_max(payload, seq) FILTER (WHERE type = 'run.error') AS error_payload,
                 arg_max(step_id, seq) FILTER (WHERE type = 'run.error') AS error_step,
                 arg_max(step_id, seq) FILTER (WHERE type IN ({STEP_TYPES})) AS last_step,
                 arg_max(type, seq) FILTER (WHERE type IN ({STEP_TYPES})) AS last_kind
          FROM events GROUP BY run_id),
        d AS (
          SELECT run_id, sum(overflow) AS overflow, sum(processor_drops) AS processor_drops,
                 sum(sink_drops) AS sink_drops, sum(unencodable) AS unencodable
          FROM (SELECT run_id, writer, max(overflow) AS overflow,
                       max(processor_drops) AS processor_drops, max(sink_drops) AS sink_drops,
                       max(unencodable) AS unencodable
                FROM _stats_all GROUP BY run_id, writer) GROUP BY run_id),
        c AS (
          SELECT run_id, sum(cost_usd) AS cost_usd,
                 count(*) FILTER (WHERE cost_usd IS NULL AND end_seq IS NOT NULL)
                     AS unpriced_calls
          FROM llm_calls GROUP BY run_id),
        sl AS (SELECT run_id, name, arg_max(value, seq) AS value FROM scores
               WHERE value IS NOT NULL GROUP BY run_id, name),
        sc AS (SELECT run_id, map_from_entries(list(struct_pack(k := name, v := value)))
                   AS scores
               FROM sl GROUP BY run_id)
        SELECT a.run_id, make_timestamp(a.start_ns // 1000) AS started,
               make_timestamp(a.end_ns // 1000) AS ended,
               CASE WHEN a.ended THEN 'complete' WHEN a.failed THEN 'failed'
                    ELSE 'incomplete' END AS status,
               a.turns, a.iterations, coalesce(a.tin, 0) + coalesce(a.tout, 0) AS tokens,
               coalesce(a.tin, 0) AS input_tokens, coalesce(a.tout, 0) AS output_tokens,
               CASE WHEN coalesce(c.unpriced_calls, 0) = 0 THEN coalesce(c.cost_usd, 0.0) END
                   AS cost_usd,
               coalesce(c.unpriced_calls, 0) AS unpriced_calls,
               coalesce((SELECT b.text FROM blobs b WHERE b.hash =
                   json_extract_string(a.end_payload, '$.final_content."$blob"')),
                   json_extract_string(a.end_payload, '$.final_content')) AS answer,
               json_extract_string(a.error_payload, '$.error_type') AS error_type,
               coalesce((SELECT b.text FROM blobs b WHERE b.hash =
                   json_extract_string(a.error_payload, '$.message."$blob"')),
                   json_extract_string(a.error_payload, '$.message')) AS error_message,
               CASE WHEN a.failed THEN {FAILED_STEP.format(
                   kind='a.last_kind', last='a.last_step', error='a.error_step')} END
                   AS failed_step,
               a.model, a.events, a.last_seq,
               coalesce(d.overflow, 0) + coalesce(d.unencodable, 0) AS dropped,
               coalesce(d.overflow, 0) AS overflow, coalesce(d.unencodable, 0) AS unencodable,
               coalesce(d.processor_drops, 0) AS filtered,
               coalesce(d.sink_drops, 0) AS mirror_dropped,
               json_extract_string(a.start_payload, '$.user_id') AS user_id,
               json_extract_string(a.start_payload, '$.session_id') AS session_id,
               json_extract_string(a.start_payload, '$.conversation_id') AS conversation_id,
               coalesce(CAST(json_extract(a.start_payload, '$.tags') AS VARCHAR[]),
                        CAST([] AS VARCHAR[])) AS tags,
               json_extract(a.start_payload, '$.metadata') AS metadata,
               json_extract_string(a.start_payload, '$.release') AS release,
               json_extract_string(a.start_payload, '$.environment') AS environment,
               a.start_ns, sc.scores
        FROM a LEFT JOIN d USING (run_id) LEFT JOIN c USING (run_id)
               LEFT JOIN sc USING (run_id)"""),
)
"""``(name, select)`` in dependency order, as written (the source :data:`VIEWS` and the Spark
views, ``recorder.spark``, are made from; Spark's JSON functions give ``NULL`` on bad JSON)."""

_JSON_CALL = re.compile(r"\b(?:json_extract_string|json_extract|json_array_length)\(")


def _close(sql: str, start: int) -> int:
    """The index just past the parenthesis that closes the one open at ``start - 1``."""
    depth, at, quoted = 1, start, False
    while depth:
        char = sql[at]
        if char == "'":
            quoted = not quoted
        elif not quoted:
            depth += {"(": 1, ")": -1}.get(char, 0)
        at += 1
    return at


def tried(sql: str) -> str:
    """``sql`` with every JSON function call wrapped in ``TRY(…)`` and every cast of one a
    ``TRY_CAST``: a payload that is not JSON (a flipped bit) reads as ``NULL`` in its own
    run's row, never failing a query over other runs."""
    sql = sql.replace("CAST(json_extract(", "TRY_CAST(json_extract(")
    out, at = [], 0
    for found in _JSON_CALL.finditer(sql):
        if found.start() < at:
            continue  # inside a call already wrapped
        end = _close(sql, found.end())
        out += [sql[at:found.start()], "TRY(", found.group(0),
                tried(sql[found.end():end - 1]), "))"]
        at = end
    return "".join(out) + sql[at:]


VIEWS: tuple[tuple[str, str], ...] = tuple((name, tried(select)) for name, select in PLAIN_VIEWS)
"""``(name, select)`` in dependency order; each becomes ``CREATE VIEW name AS select``. Every
JSON function is guarded (:func:`tried`): one bad payload costs its own run's values only."""

