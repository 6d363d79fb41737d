"""Outlines: a small table per sealed events file, so a run's outline costs milliseconds.

An outline holds, for every run in the file, one row per run (``level =
'run'``: seq range, counts, times, tokens, model, answer), per iteration
(``'iteration'``: its seq range) and per event type (``'type'``: its count).
It is computed once from the file (one grouped scan) and cached beside the
store's files as ``summaries/<segment>.<date>.<size>-<mtime_ns>.parquet``
(temp name, then rename; a read-only store keeps it in memory instead), so
a rewritten or replaced events file never meets a stale outline. Live
segments are outlined on every refresh (they are still growing).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from recorder.store._views import FAILED_STEP, STEP_TYPES
from recorder.write._layout import SUMMARIES

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["OUTLINE_SCHEMA", "OUTLINE_SELECT", "Outlines", "outline_name", "outline_view"]

OUTLINE_SCHEMA = pa.schema([
    pa.field("level", pa.string()), pa.field("run_id", pa.string()),
    pa.field("iteration", pa.int64()), pa.field("type", pa.string()),
    pa.field("first_seq", pa.int64()), pa.field("last_seq", pa.int64()),
    pa.field("events", pa.int64()), pa.field("turn", pa.int64()),
    pa.field("start_ns", pa.int64()), pa.field("end_ns", pa.int64()),
    pa.field("input_tokens", pa.int64()), pa.field("output_tokens", pa.int64()),
    pa.field("ended", pa.int64()), pa.field("failed", pa.int64()),
    pa.field("model", pa.string()), pa.field("model_rank", pa.int64()),
    pa.field("model_seq", pa.int64()), pa.field("answer", pa.string()),
    pa.field("answer_blob", pa.string()), pa.field("answer_seq", pa.int64()),
    pa.field("error_type", pa.string()), pa.field("error_message", pa.string()),
    pa.field("error_blob", pa.string()), pa.field("error_seq", pa.int64()),
    pa.field("failed_step", pa.string()),
])
"""One outline row; the run-level fields are ``NULL`` on iteration and type rows."""

_TOKENS = "TRY_CAST(try(json_extract_string(payload, '$.{}')) AS BIGINT)"
_BLOB = "try(json_extract_string(payload, '$.{}.\"$blob\"'))"
_STEPS = STEP_TYPES
OUTLINE_SELECT = f"""
WITH g AS (
  SELECT CASE WHEN GROUPING(iteration) = 0 THEN 'iteration'
              WHEN GROUPING(type) = 0 THEN 'type' ELSE 'run' END AS level,
         run_id, iteration, type, min(seq) AS first_seq, max(seq) AS last_seq,
         count(*) AS events, min(turn) AS turn, min(ts) AS start_ns,
         max(ts) FILTER (WHERE type IN ('run.end', 'run.error')) AS end_ns,
         count(*) FILTER (WHERE type = 'run.end') AS ended,
         count(*) FILTER (WHERE type = 'run.error') AS failed,
         coalesce(arg_min(model, seq) FILTER (WHERE type = 'run.configured'),
                  arg_min(model, seq) FILTER (WHERE type = 'llm.start')) AS model,
         CASE WHEN count(*) FILTER (WHERE type = 'run.configured') > 0 THEN 0
              WHEN count(*) FILTER (WHERE type = 'llm.start') > 0 THEN 1 END AS model_rank,
         coalesce(min(seq) FILTER (WHERE type = 'run.configured'),
                  min(seq) FILTER (WHERE type = 'llm.start')) AS model_seq
  FROM (SELECT run_id, iteration, type, seq, turn, ts, model FROM {{source}})
  GROUP BY GROUPING SETS ((run_id), (run_id, iteration), (run_id, type))),
p AS (
  SELECT run_id,
         sum({_TOKENS.format('input_tokens')}) FILTER (WHERE type = 'llm.end') AS input_tokens,
         sum({_TOKENS.format('output_tokens')}) FILTER (WHERE type = 'llm.end')
             AS output_tokens,
         arg_max(CASE WHEN {_BLOB.format('final_content')} IS NULL
                      THEN try(json_extract_string(payload, '$.final_content')) END, seq)
             FILTER (WHERE type = 'run.end') AS answer,
         arg_max({_BLOB.format('final_content')}, seq) FILTER (WHERE type = 'run.end')
             AS answer_blob,
         max(seq) FILTER (WHERE type = 'run.end') AS answer_seq,
         arg_max(try(json_extract_string(payload, '$.error_type')), seq)
             FILTER (WHERE type = 'run.error') AS error_type,
         arg_max(CASE WHEN {_BLOB.format('message')} IS NULL
                      THEN try(json_extract_string(payload, '$.message')) END, seq)
             FILTER (WHERE type = 'run.error') AS error_message,
         arg_max({_BLOB.format('message')}, seq) FILTER (WHERE type = 'run.error')
             AS error_blob,
         max(seq) FILTER (WHERE type = 'run.error') AS error_seq,
         arg_max(step_id, seq) FILTER (WHERE type = 'run.error') AS error_step,
         arg_max(step_id, seq) FILTER (WHERE type IN ({_STEPS})) AS last_step,
         arg_max(type, seq) FILTER (WHERE type IN ({_STEPS})) AS last_kind
  FROM (SELECT run_id, seq, type, step_id,
               CASE WHEN type IN ('llm.end', 'run.end', 'run.error') THEN payload END AS payload
        FROM {{source}} WHERE type IN ('llm.end', 'run.end', 'run.error', {_STEPS}))
  GROUP BY run_id)
SELECT g.*, p.input_tokens, p.output_tokens, p.answer, p.answer_blob, p.answer_seq,
       p.error_type, p.error_message, p.error_blob, p.error_seq,
       CASE WHEN p.error_seq IS NOT NULL THEN {FAILED_STEP.format(
           kind='p.last_kind', last='p.last_step', error='p.error_step')} END AS failed_step
FROM g LEFT JOIN p ON g.level = 'run' AND g.run_id = p.run_id
"""
"""The outline of ``{source}`` (any relation with the event columns)."""


_VERSION = "o2"
"""The outline's schema in its cache name: outlines cached before a change are not read."""


def outline_name(path: Path) -> str:
    """The cache file name of the outline of sealed events file ``path``."""
    stat = path.stat()
    day = path.parent.name.removeprefix("date=")
    return f"{path.stem}.{day}.{stat.st_size}-{stat.st_mtime_ns}.{_VERSION}.parquet"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class Outlines:
    """The outlines of one store's files: read from the cache, computed where missing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._memory: dict[str, pa.Table] = {}

    def tables(self, store: StoreView, events: Iterable[Path]) -> tuple[list[Path], list[pa.Table]]:
        """Cached outline files and in-memory outlines covering ``events`` (sealed files)."""
        folder = self.root / SUMMARIES
        cached = {p.name for p in folder.glob("*.parquet")} if folder.is_dir() else set()
        files: list[Path] = []
        tables: list[pa.Table] = []
        for path in events:
            try:
                name = outline_name(path)
            except OSError:
                continue  # vanished since the scan (quarantined, re-sealed)
            if name in cached:
                files.append(folder / name)
            elif name in self._memory:
                tables.append(self._memory[name])
            else:
                table = self._compute(store.con, f"read_parquet({_quote(path)})")
                if self._save(table, folder / name):
                    files.append(folder / name)
                else:
                    self._memory[name] = table
                    tables.append(table)
        return files, tables

    @staticmethod
    def _compute(con: duckdb.DuckDBPyConnection, source: str) -> pa.Table:
        table = con.sql(OUTLINE_SELECT.format(source=source)).to_arrow_table()
        return table.select(OUTLINE_SCHEMA.names).cast(OUTLINE_SCHEMA)

    @staticmethod
    def _save(table: pa.Table, final: Path) -> bool:
        """Write ``table`` to ``final`` (temp + rename); ``False`` when the store is read-only."""
        tmp = final.with_name(f".{final.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp, compression="zstd")
            os.replace(tmp, final)
        except OSError:
            tmp.unlink(missing_ok=True)
            return False
        return True


def outline_view(store: StoreView) -> str:
    """``_outline_all``: the outlines of every file the store sees, made on first need
    after each ``refresh()`` (sealed files from the cache, live segments anew)."""
    from recorder.store._damage import guarded

    return guarded(store, lambda: _outline_view(store))


def _outline_view(store: StoreView) -> str:
    if not store.outlined:
        files, tables = store.outlines.tables(store, store.files.events)
        con = store.con
        con.register("_outline_mem", pa.concat_tables([OUTLINE_SCHEMA.empty_table(), *tables]))
        con.register("_outline_live", Outlines._compute(con, "_live_events"))
        parts = ["SELECT * FROM _outline_mem", "SELECT * FROM _outline_live"]
        if files:
            listed = ", ".join(_quote(p) for p in files)
            parts.append(f"SELECT * FROM read_parquet([{listed}])")
        con.execute("CREATE OR REPLACE VIEW _outline_all AS " + " UNION ALL BY NAME ".join(parts))
        store.outlined = True
    return "_outline_all"
