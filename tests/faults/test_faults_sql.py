"""The SQL sandbox: every escape from the store's views is refused in one line.

Each escape runs through the real ``footprint sql`` in a subprocess and through
``Store.sql``; afterwards the store still answers, its files are unchanged, and
nothing was written or read outside it. The TUI console goes through the same
``Store.sql``: a ``DROP VIEW`` there is refused and the session keeps working.
"""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from footprint.agent import SeededIds
from lens._examples.support_desk import make_agent
from recorder import ParquetSink, Recorder, SqlRefused, open_store
from recorder.store._sandbox import Sandbox

# {sealed} is one of the store's own Parquet files, {out} a path outside the store
ESCAPES = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd', sep=':')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM '/etc/passwd'",
    "DESCRIBE '/etc/passwd'",
    "SUMMARIZE '/etc/passwd'",
    "SELECT * FROM read_parquet('{sealed}')",
    "SELECT * FROM parquet_metadata('{sealed}')",
    "SELECT * FROM read_blob('{sealed}')",
    "SELECT * FROM '{sealed}'",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
    "SELECT * FROM query_table('events')",
    "SELECT count(*) FROM events WHERE run_id IN (SELECT content FROM read_text('/etc/hosts'))",
    "WITH x AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM x",
    "COPY events TO '{out}/stolen.csv'",
    "COPY (SELECT 1 AS x) TO '{sealed}' (FORMAT parquet)",
    "COPY events FROM '{out}/in.csv'",
    "EXPORT DATABASE '{out}/export'",
    "ATTACH '{out}/other.duckdb' AS other",
    "DETACH memory",
    "INSTALL httpfs",
    "FORCE INSTALL httpfs",
    "LOAD httpfs",
    "LOAD '{out}/evil.duckdb_extension'",
    "UPDATE EXTENSIONS",
    "SET enable_external_access = true",
    "RESET lock_configuration",
    "SET VARIABLE x = 1",
    "USE memory",
    "PRAGMA version",
    "CALL duckdb_settings()",
    "DROP VIEW events",
    "CREATE TABLE t AS SELECT 1",
    "CREATE OR REPLACE VIEW runs AS SELECT 1",
    "CREATE MACRO m(a) AS a",
    "INSERT INTO events SELECT * FROM events",
    "DELETE FROM events",
    "ALTER VIEW events RENAME TO gone",
    "EXPLAIN ANALYZE COPY events TO '{out}/explained.csv'",
    "PREPARE p AS SELECT 1",
    "BEGIN TRANSACTION",
    "CHECKPOINT",
    "SELECT 1; DROP VIEW events",
    "",
    "   ",
    ";",
    "-- just a comment",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sandbox") / "store"
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        make_agent(sink=recorder, ids=SeededIds(1)).answer()
    return root


def _fill(query: str, store: Path, out: Path) -> str:
    sealed = next(store.glob("events/*/*.parquet"))
    return query.replace("{sealed}", str(sealed)).replace("{out}", str(out))


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("escape", ESCAPES)
def test_given_an_escape_when_store_sql_runs_it_then_one_line_refusal_and_nothing_changes(
    store: Path, tmp_path: Path, escape: str,
) -> None:
    before = _digests(store)
    with open_store(store) as s:
        with pytest.raises(SqlRefused) as refused:
            s.sql(_fill(escape, store, tmp_path))
        message = str(refused.value)
        assert message.startswith("refused: ") and "\n" not in message
        assert "root:" not in message
        assert s.sql("SELECT count(*) FROM events").fetchall()[0][0] > 50
    assert _digests(store) == before
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("escape", [
    "SELECT * FROM read_csv('/etc/passwd')", "COPY events TO '{out}/stolen.csv'",
    "DROP VIEW events", "INSTALL httpfs", "ATTACH '{out}/x.duckdb'", "",
    "SELECT * FROM read_blob('{sealed}')",
])
def test_given_an_escape_when_footprint_sql_runs_it_then_one_line_on_stderr_and_exit_2(
    store: Path, tmp_path: Path, escape: str,
) -> None:
    before = _digests(store)
    done = subprocess.run(
        [sys.executable, "-m", "lens.cli", "sql", _fill(escape, store, tmp_path),
         "--store", str(store)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("footprint sql: refused: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr and "root:" not in done.stderr
    assert _digests(store) == before and list(tmp_path.iterdir()) == []


def test_given_read_only_queries_when_store_sql_runs_them_then_they_answer(store: Path) -> None:
    with open_store(store) as s:
        assert s.sql("SELECT status FROM runs").fetchall() == [("complete",)]
        assert ("run_id",) in [r[:1] for r in s.sql("DESCRIBE events").fetchall()]
        assert ("events",) in s.sql("SHOW TABLES").fetchall()
        assert s.sql("SUMMARIZE runs").fetchall()
        assert s.sql("FROM range(3) SELECT count(*)").fetchall() == [(3,)]
        assert s.sql("SELECT count(*) FROM duckdb_views() WHERE view_name = 'runs'"
                     ).fetchall() == [(1,)]
        assert s.sql("WITH t AS (SELECT type FROM events) SELECT count(DISTINCT type) FROM t"
                     ).fetchall()[0][0] > 5


def test_given_a_result_left_open_when_the_next_query_runs_then_it_answers(store: Path) -> None:
    """``.arrow()`` hands back a stream that stays open until read: it may not hold the
    store's SQL connection (the next query raised ResourceInUseException)."""
    with open_store(store) as s:
        streaming = s.sql("SELECT * FROM events").arrow()
        other = s.sql("SELECT run_id FROM runs").arrow()
        assert s.sql("SELECT count(*) FROM runs").fetchall() == [(1,)]
        assert streaming.read_all().num_rows > 50 and other.read_all().num_rows == 1
        assert s.sql("SELECT status FROM runs").fetchall() == [("complete",)]


def test_given_the_sandbox_connection_when_a_file_is_read_behind_the_checks_then_duckdb_refuses(
    store: Path,
) -> None:
    """Defence in depth: even unchecked SQL on the sandbox connection cannot leave the store."""
    with open_store(store) as s:
        s.sql("SELECT 1").fetchall()
        sandbox = s._sandbox
        assert isinstance(sandbox, Sandbox)
        for query in ("SELECT * FROM read_csv('/etc/passwd')", "SET enable_external_access = true",
                      "INSTALL httpfs", "SELECT * FROM glob('/etc/*')"):
            with pytest.raises(duckdb.Error):
                sandbox.con.execute(query).fetchall()
        # the views still read the store's files through the allowed paths
        assert sandbox.con.execute("SELECT count(*) FROM events").fetchall()[0][0] > 50


def test_given_new_files_when_the_store_refreshes_then_the_sandbox_sees_them(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        make_agent(sink=recorder).answer()
    with open_store(root) as s:
        assert s.sql("SELECT count(*) FROM runs").fetchall() == [(1,)]
        with Recorder(sinks=[ParquetSink(root)]) as recorder:
            make_agent(sink=recorder).answer()
        s.refresh()
        assert s.sql("SELECT count(*) FROM runs").fetchall() == [(2,)]


async def test_given_the_tui_console_when_drop_view_is_entered_then_refused_and_queries_still_work(
    store: Path,
) -> None:
    from textual.widgets import Input, Static

    from lens.tui import LensApp
    from lens.tui._sql import SqlLines, SqlScreen

    async def settled() -> None:  # the console runs each query on a worker
        for _ in range(500):
            await pilot.pause()
            if all(w.is_finished for w in app.workers):
                return
            await asyncio.sleep(0.01)

    app = LensApp(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("colon")
        assert isinstance(app.screen, SqlScreen)
        query = app.screen.query_one(Input)
        for escape in ("DROP VIEW events", "COPY events TO '/tmp/fp-escape.csv'",
                       "SELECT * FROM read_csv('/etc/passwd')"):
            query.value = escape
            await pilot.press("enter")
            await settled()
            status = str(app.screen.query_one("#status", Static).render())
            assert status.startswith("error: refused: ") and "\n" not in status
        query.value = "SELECT count(*) AS n FROM events"
        await pilot.press("enter")
        await settled()
        table = app.screen.query_one(SqlLines)
        assert table.count == 1 and int(table.result.rows[0][0]) > 50
    assert not Path("/tmp/fp-escape.csv").exists()
