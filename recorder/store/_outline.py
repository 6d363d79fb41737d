"""Outlines: a small table per sealed events file, so a run's outline costs milliseconds.

An outline holds, for every run in the file, one row per run (``level =
'run'``: seq range, counts, times, tokens, model, answer), per iteration
(``'iteration'``: its seq range) and per event type (``'type'``: its count).
It is computed once from the file (one grouped scan) and cached beside the
store's files as ``summaries/<segment>.<date>.<size>-<mtime_ns>.parquet``
(temp name, fsync, rename, fsync of the folder; a read-only store keeps it
in memory instead), so a rewritten or replaced events file never meets a
stale outline. A cached outline is checked before use and rebuilt from the
record when damaged (see :class:`Outlines`). Live
segments are outlined on every refresh (they are still growing).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from recorder.store._costs import CALL_ROWS, CallFacts, call_facts, with_call_facts
from recorder.store._views import DECISION_TYPES, FAILED_STEP, STEP_TYPES, tried
from recorder.write._layout import SUMMARIES
from recorder.write._schemas import EVENT_SCHEMA

if TYPE_CHECKING:
    from recorder.store._base import FoundFiles, StoreView

__all__ = ["OUTLINE_SCHEMA", "OUTLINE_SELECT", "OUTLINE_VERSION", "Outlines", "outline_name",
           "outline_problem", "outline_view"]

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
    pa.field("user_id", pa.string()), pa.field("session_id", pa.string()),
    pa.field("tags", pa.list_(pa.string())), pa.field("release", pa.string()),
    pa.field("environment", pa.string()),
    pa.field("score_value", pa.float64()), pa.field("score_label", pa.string()),
    pa.field("end_seq", pa.int64()), pa.field("provider", pa.string()),
    pa.field("cache_read_tokens", pa.int64()), pa.field("cache_write_tokens", pa.int64()),
    pa.field("decisions", pa.int64()),
])
"""One outline row; the run-level fields are ``NULL`` on iteration and type rows. A
``'score'`` row is one ``feedback.recorded`` event: ``type`` its score name, ``last_seq``
its seq, ``start_ns`` its time, ``score_value``/``score_label`` what it gave. A ``'call'``
row is one model call (``recorder.store._costs``): ``first_seq``/``end_seq`` its
``llm.start``/``llm.end``, its ``model``, ``provider`` and tokens (``input_tokens`` …
``cache_write_tokens``: the call's own, never summed into the run's). ``decisions`` counts
a row's events of the decision types (``recorder.store._views.DECISION_TYPES``)."""

OUTLINE_VERSION = 4
"""Part of every cached outline's name: a new outline shape never reads an old cache (nor
does a new list of decision types: the cached counts follow it)."""

_TOKENS = "TRY_CAST(try(json_extract_string(payload, '$.{}')) AS BIGINT)"
_BLOB = "try(json_extract_string(payload, '$.{}.\"$blob\"'))"
_STEPS = STEP_TYPES
_DECISIONS = ", ".join(f"'{t}'" for t in DECISION_TYPES)
_LABEL = "arg_min(try(json_extract_string(payload, '$.{0}')), seq) FILTER (WHERE type = " \
    "'run.start') AS {0}"
_labels = ",\n         ".join(
    [*(_LABEL.format(k) for k in ("user_id", "session_id", "release", "environment")),
     "arg_min(try(CAST(json_extract(payload, '$.tags') AS VARCHAR[])), seq) "
     "FILTER (WHERE type = 'run.start') AS tags"])
OUTLINE_SELECT = tried(f"""
WITH g AS (
  SELECT CASE WHEN GROUPING(iteration) = 0 THEN 'iteration'
              WHEN GROUPING(type) = 0 THEN 'type' ELSE 'run' END AS level,
         run_id, iteration, type, min(seq) AS first_seq, max(seq) AS last_seq,
         count(*) AS events, min(turn) AS turn, min(ts) AS start_ns,
         max(ts) FILTER (WHERE type IN ('run.end', 'run.error')) AS end_ns,
         count(*) FILTER (WHERE type = 'run.end') AS ended,
         count(*) FILTER (WHERE type = 'run.error') AS failed,
         count(*) FILTER (WHERE type IN ({_DECISIONS})) AS decisions,
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
         arg_max(type, seq) FILTER (WHERE type IN ({_STEPS})) AS last_kind,
         {_labels}
  FROM (SELECT run_id, seq, type, step_id,
               CASE WHEN type IN ('llm.end', 'run.end', 'run.error', 'run.start')
                    THEN payload END AS payload
        FROM {{source}}
        WHERE type IN ('llm.end', 'run.end', 'run.error', 'run.start', {_STEPS}))
  GROUP BY run_id)
SELECT g.*, p.input_tokens, p.output_tokens, p.answer, p.answer_blob, p.answer_seq,
       p.error_type, p.error_message, p.error_blob, p.error_seq,
       p.user_id, p.session_id, p.release, p.environment, p.tags,
       CASE WHEN p.error_seq IS NOT NULL THEN {FAILED_STEP.format(
           kind='p.last_kind', last='p.last_step', error='p.error_step')} END AS failed_step
FROM g LEFT JOIN p ON g.level = 'run' AND g.run_id = p.run_id
UNION ALL BY NAME
SELECT 'score' AS level, run_id, json_extract_string(payload, '$.name') AS type,
       seq AS first_seq, seq AS last_seq, ts AS start_ns,
       TRY_CAST(json_extract_string(payload, '$.value') AS DOUBLE) AS score_value,
       json_extract_string(payload, '$.label') AS score_label
FROM {{source}} WHERE type = 'feedback.recorded'
UNION ALL BY NAME
{CALL_ROWS}""")
"""The outline of ``{source}`` (any relation with the event columns)."""


def outline_name(path: Path) -> str:
    """The cache file name of the outline of sealed events file ``path``."""
    stat = path.stat()
    day = path.parent.name.removeprefix("date=")
    return f"{path.stem}.{day}.{stat.st_size}-{stat.st_mtime_ns}.v{OUTLINE_VERSION}.parquet"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class Outlines:
    """The outlines of one store's files: read from the cache, computed where missing.

    A cached outline is derived data and never trusted over the record: each
    is checked once per process (footer, schema) before use; one that is
    empty, garbage or in another schema is rebuilt from its events file
    (one warning for the lot), and one a query finds damaged inside is
    :meth:`discard`-ed and rebuilt the same way.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._memory: dict[str, pa.Table] = {}
        self._checked: set[str] = set()
        self.in_use: list[Path] = []
        """The cached outline files the outline view reads now."""
        self.rebuilt: dict[Path, str] = {}
        """Damaged cached outlines met by this store, and why (rebuilt since)."""
        self._facts: dict[str, CallFacts] = {}
        self.calls = CallFacts()
        """The :class:`CallFacts` of the outlines the outline view reads now."""

    def tables(self, store: StoreView, events: Iterable[Path]) -> tuple[list[Path], list[pa.Table]]:
        """Cached outline files and in-memory outlines covering ``events`` (sealed files)."""
        folder = self.root / SUMMARIES
        cached = {p.name for p in folder.glob("*.parquet")} if folder.is_dir() else set()
        files: list[Path] = []
        tables: list[pa.Table] = []
        damaged: dict[Path, str] = {}
        facts = CallFacts()
        for path in events:
            try:
                name = outline_name(path)
            except OSError:
                continue  # vanished since the scan (quarantined, re-sealed)
            if name in self._memory:
                tables.append(self._memory[name])
            elif name in cached and self._sound(folder / name, damaged):
                files.append(folder / name)
            else:
                table = self.compute(store.con, path)
                self._facts[name] = call_facts(table.schema.metadata) or CallFacts()
                if self._save(table, folder / name):
                    self._checked.add(name)
                    files.append(folder / name)
                else:
                    self._memory[name] = table
                    tables.append(table)
            facts |= self._facts[name]
        _warn_rebuilt(damaged)
        self.in_use, self.calls = files, facts
        return files, tables

    def _sound(self, path: Path, damaged: dict[Path, str]) -> bool:
        """Whether cached outline ``path`` reads as an outline (checked once per process)."""
        if path.name in self._checked:
            return True
        problem, facts = _inspect(path)
        if facts is not None:
            self._checked.add(path.name)
            self._facts[path.name] = facts
            return True
        problem = problem or "no call facts"
        damaged[path] = problem
        self._drop(path, problem)
        return False

    def _drop(self, path: Path, why: str) -> None:
        self.rebuilt[path] = why
        self._checked.discard(path.name)
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)  # derived: rebuilt from the record on the next read

    def owns(self, path: Path) -> bool:
        """Whether ``path`` is one of this store's cached outlines."""
        return path.parent == self.root / SUMMARIES

    def owns_any(self, paths: Iterable[Path]) -> bool:
        return any(self.owns(p) for p in paths)

    def view(self, store: StoreView) -> str:
        """The outline view of ``store``, made anew when the last scan or a discard
        outdated it."""
        return _outline_view(store)

    def discard(self, path: Path, why: str) -> None:
        """Forget cached outline ``path`` (damaged inside): it is rebuilt on the next read."""
        self._drop(path, why)
        _warn_rebuilt({path: why})

    @staticmethod
    def compute(con: duckdb.DuckDBPyConnection, path: Path) -> pa.Table:
        """The outline of sealed events file ``path``, computed from the file (its
        :class:`CallFacts` in its metadata)."""
        con.register("_event_shape", EVENT_SCHEMA.empty_table())  # a column a file lacks: NULL
        return with_call_facts(con, Outlines._compute(
            con, f"(SELECT * FROM _event_shape UNION ALL BY NAME "
                 f"SELECT * FROM read_parquet({_quote(path)}))"))

    @staticmethod
    def _compute(con: duckdb.DuckDBPyConnection, source: str) -> pa.Table:
        table = con.sql(OUTLINE_SELECT.format(source=source)).to_arrow_table()
        return table.select(OUTLINE_SCHEMA.names).cast(OUTLINE_SCHEMA)

    @staticmethod
    def _save(table: pa.Table, final: Path) -> bool:
        """Write ``table`` to ``final`` atomically and durably (temp, fsync, rename, fsync of
        the folder: a power loss leaves the old file or the new one, never a torn one);
        ``False`` when the store is read-only."""
        tmp = final.with_name(f".{final.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp, compression="zstd", write_page_checksum=True)
            _fsync(tmp)
            os.replace(tmp, final)
            _fsync(final.parent)
        except OSError:
            tmp.unlink(missing_ok=True)
            return False
        return True


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def outline_problem(path: Path) -> str | None:
    """Why cached outline ``path`` cannot be used (empty, garbage, another schema), or ``None``."""
    return _inspect(path)[0]


def _inspect(path: Path) -> tuple[str | None, CallFacts | None]:
    """Why cached outline ``path`` cannot be used (or ``None``), and its call facts."""
    try:
        if path.stat().st_size == 0:
            return "an empty file", None
        schema = pq.read_schema(path)
    except Exception as exc:  # a torn footer, garbage
        return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}", None
    if not schema.remove_metadata().equals(OUTLINE_SCHEMA):
        return "not an outline's schema", None
    facts = call_facts(schema.metadata)
    return (None, facts) if facts is not None else ("no call facts in its metadata", None)


def _warn_rebuilt(damaged: dict[Path, str]) -> None:
    if not damaged:
        return
    from recorder.store._damage import StoreWarning

    first, why = next(iter(damaged.items()))
    more = f" and {len(damaged) - 1} more" if len(damaged) > 1 else ""
    warnings.warn(
        f"rebuilt the damaged cached outline {str(first)!r} ({why}){more} from the events "
        "files; outlines are derived data, the record is unaffected", StoreWarning,
        stacklevel=5)


def outline_view(store: StoreView) -> str:
    """``_outline_all``: the outlines of every file the store sees, made on first need
    after each ``refresh()`` (sealed files from the cache, live segments anew)."""
    from recorder.store._damage import guarded

    return guarded(store, lambda: _outline_view(store))


def _outline_view(store: StoreView) -> str:
    if not store.outlined:
        files, tables = store.outlines.tables(store, store.files.events)
        con = store.con
        parts = []
        if tables:
            con.register("_outline_mem", pa.concat_tables(tables))
            parts.append("SELECT * FROM _outline_mem")
        if _has_live(store.files):  # an empty live set costs nothing (no query planned)
            live = with_call_facts(con, Outlines._compute(con, "_live_events"))
            store.outlines.calls |= call_facts(live.schema.metadata) or CallFacts()
            con.register("_outline_live", live)
            parts.append("SELECT * FROM _outline_live")
        if files:
            listed = ", ".join(_quote(p) for p in files)
            parts.append(f"SELECT * FROM read_parquet([{listed}])")
        if not parts:
            con.register("_outline_mem", OUTLINE_SCHEMA.empty_table())
            parts.append("SELECT * FROM _outline_mem")
        con.execute("CREATE OR REPLACE VIEW _outline_all AS " + " UNION ALL BY NAME ".join(parts))
        store.outlined = True
    return "_outline_all"


def _has_live(found: FoundFiles) -> bool:
    """Whether the scan found live events (in memory or spilled)."""
    return bool(found.live_event_files) or any(b.num_rows for b in found.live_events)
