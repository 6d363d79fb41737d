"""User SQL is bounded: a time limit (``Store.sql(timeout=…)``, ``footprint sql --timeout``,
the lens console) and Ctrl-C stop a query that never ends, through DuckDB's interrupt."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from footprint._errors import ConfigError
from footprint.agent import SeededIds
from lens._examples.support_desk import make_agent
from lens.cli._exits import GRACE_S
from lens.tui._sql import run_query
from lens.tui._state import LensState
from recorder import ParquetSink, Recorder, SqlTimeout, open_store

ENDLESS = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t"
"""A recursive query that never ends (each step adds a row)."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bounded") / "store"
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        make_agent(sink=recorder, ids=SeededIds(9)).answer()
    return root


def test_given_an_endless_recursive_query_when_store_sql_has_a_timeout_then_it_stops_there(
    store: Path,
) -> None:
    opened = open_store(store)
    with pytest.raises(SqlTimeout, match=r"time limit of 0\.5 s; pass a larger Store\.sql\("
                                         r"timeout=…\)") as caught:
        opened.sql(ENDLESS, timeout=0.5)
    assert caught.value.limit == 0.5
    ((events,),) = opened.sql("SELECT count(*) FROM events", timeout=30).fetchall()
    assert events > 0  # the sandbox answers the next query


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5"])
def test_given_a_bad_timeout_when_store_sql_is_called_then_a_config_error_names_it(
    store: Path, bad: object,
) -> None:
    with pytest.raises(ConfigError, match=r"Store\.sql\(timeout="):
        open_store(store).sql("SELECT 1", timeout=bad)  # type: ignore[arg-type]


def test_given_an_endless_query_when_the_lens_console_runs_it_then_its_limit_stops_it(
    store: Path,
) -> None:
    result = run_query(LensState(store), ENDLESS, timeout=0.5)
    assert result.rows == []
    assert result.error is not None and "time limit of 0.5 s" in result.error
    assert "footprint sql --timeout SECONDS" in result.error


def _footprint_sql(store: Path, *argv: str) -> list[str]:
    return [sys.executable, "-m", "footprint", "sql", *argv, "--store", str(store)]


def test_given_an_endless_query_when_footprint_sql_has_a_timeout_then_exit_2_naming_the_flag(
    store: Path,
) -> None:
    done = subprocess.run(_footprint_sql(store, ENDLESS, "--timeout", "0.5"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "footprint sql: query stopped at its time limit of 0.5 s; pass --timeout SECONDS for a "
        "longer limit (--timeout 0: none)"]


def _interrupt_after_ready(proc: subprocess.Popen[str], ready: str) -> tuple[str, str, float]:
    assert proc.stdout is not None
    while ready not in proc.stdout.readline():
        assert proc.poll() is None, proc.communicate()
    time.sleep(1.0)  # the query is running in native code by now
    assert proc.poll() is None
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return out, err, time.monotonic() - started


def test_given_store_sql_running_an_endless_query_when_sigint_arrives_then_keyboard_interrupt(
    store: Path,
) -> None:
    script = textwrap.dedent(f"""
        import sys
        from recorder import open_store
        store = open_store({str(store)!r})
        print("ready", flush=True)
        try:
            store.sql({ENDLESS!r})
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(130)
        print("returned", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err, took = _interrupt_after_ready(proc, "ready")
    assert proc.returncode == 130, err
    assert out.splitlines() == ["KeyboardInterrupt"]
    assert took < 2.0, f"Store.sql took {took:.2f} s to give up after SIGINT"


def test_given_footprint_sql_running_an_endless_query_when_sigint_arrives_then_exit_130(
    store: Path,
) -> None:
    script = textwrap.dedent(f"""
        import sys
        import lens.cli._sql, recorder.store._catalog  # imported before the signal can come
        from lens.cli._main import main
        print("ready", flush=True)
        sys.argv = ["footprint", "sql", {ENDLESS!r}, "--timeout", "0", "--store",
                    {str(store)!r}]
        sys.exit(main())
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err, took = _interrupt_after_ready(proc, "ready")
    assert proc.returncode == 130, err
    assert err.splitlines() == ["footprint sql: interrupted"]
    # under GRACE_S (1.5 s), when the command's backstop would end a query it could not stop
    assert took < GRACE_S - 0.1, f"footprint sql took {took:.2f} s to end after SIGINT"
