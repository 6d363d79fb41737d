"""``list_runs`` / ``footprint runs``: filters and pages agree with the runs that were written."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import pytest
from store_scale import MODELS, T0, run_id_of, status_of, write_many_runs

from footprint import Agent, ScriptedModel
from footprint._errors import ConfigError
from footprint.events import RunEnd, RunStart
from recorder import (
    ParquetSink,
    Recorder,
    RunQuery,
    Store,
    count_runs,
    feedback,
    list_runs,
    open_store,
)

RUNS = 60
LONG = "REFUNDED " + "because the order arrived broken; " * 20 + "needle-in-a-blob"
LONG_RUN = "0190cccc-0000-7000-8000-000000000001"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runlist") / "store"
    write_many_runs(root, RUNS, iterations=2, together=7)
    sink = ParquetSink(root)
    start = T0 + 5 * 86_400 * 10**9
    sink.export([RunStart(run_id=LONG_RUN, seq=0, ts=start, user_message="hi"),
                 RunEnd(run_id=LONG_RUN, seq=1, ts=start + 1, final_content=LONG)])
    sink.shutdown()
    return root


@pytest.fixture(scope="module")
def store(root: Path) -> Store:
    return open_store(root)


def _started(n: int) -> datetime.date:
    return datetime.datetime.fromtimestamp((T0 + n * 60 * 10**9) / 1e9, datetime.UTC).date()


def test_given_runs_when_listed_then_newest_first_and_each_run_once(store: Store) -> None:
    table = list_runs(store, RunQuery(limit=1000))
    ids = table.column("run_id").to_pylist()
    assert ids[0] == LONG_RUN and ids[1:] == [run_id_of(n) for n in reversed(range(RUNS))]
    rows = {r["run_id"]: r for r in table.to_pylist()}
    assert rows[LONG_RUN]["answer"] == LONG
    assert rows[run_id_of(1)]["events"] == 2 * 8 + 2 and rows[run_id_of(1)]["iterations"] == 2
    assert count_runs(store) == RUNS + 1


@pytest.mark.parametrize("status", ["complete", "failed", "incomplete"])
def test_given_a_status_when_filtered_then_exactly_those_runs(store: Store, status: str) -> None:
    got = set(list_runs(store, RunQuery(status=(status,), limit=1000))["run_id"].to_pylist())
    expected = {run_id_of(n) for n in range(RUNS) if status_of(n) == status}
    assert got - {LONG_RUN} == expected


def test_given_model_date_and_answer_filters_when_combined_then_they_all_apply(
    store: Store,
) -> None:
    day = _started(0)
    query = RunQuery(model="MODEL-B", since=day.isoformat(), until=day, answer="order 1",
                     limit=1000)
    got = set(list_runs(store, query)["run_id"].to_pylist())
    expected = {run_id_of(n) for n in range(RUNS) if MODELS[n % 3] == "model-b"
                and status_of(n) == "complete" and f"order {n} " in f"APPROVED order {n} "
                and str(n).startswith("1") and _started(n) == day}
    assert got == expected and got


def test_given_an_answer_held_in_a_blob_when_searched_then_found(store: Store) -> None:
    table = list_runs(store, RunQuery(answer="NEEDLE-in-a"))
    assert table["run_id"].to_pylist() == [LONG_RUN]


def test_given_pages_when_walked_then_they_tile_the_list(store: Store) -> None:
    pages = [list_runs(store, RunQuery(limit=9, offset=k, newest_first=False))
             for k in range(0, RUNS + 1, 9)]
    ids = [i for p in pages for i in p["run_id"].to_pylist()]
    assert ids == list(reversed(list_runs(store, RunQuery(limit=1000))["run_id"].to_pylist()))


@pytest.mark.parametrize("bad", [
    {"status": ("done",)}, {"status": "complete"}, {"limit": -1}, {"since": "yesterday"},
    {"since": "2026-02-02", "until": "2026-01-01"}, {"run_ids": "abc"},
])
def test_given_a_bad_run_query_when_built_then_a_one_line_config_error(
    bad: dict[str, object],
) -> None:
    with pytest.raises(ConfigError) as caught:
        RunQuery(**bad)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def _footprint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_given_cli_filters_when_runs_listed_then_only_matching_runs_print(root: Path) -> None:
    out = _footprint("runs", "--store", str(root), "--status", "failed", "--model", "b")
    assert out.returncode == 0, out.stderr
    printed = {line.split()[0] for line in out.stdout.splitlines()[2:] if line.strip()}
    expected = {run_id_of(n) for n in range(RUNS)
                if status_of(n) == "failed" and MODELS[n % 3] == "model-b"}
    assert printed == {r[:48] for r in expected} and printed
    none = _footprint("runs", "--store", str(root), "--search", "no such answer anywhere")
    assert none.returncode == 0 and "no runs match those filters" in none.stdout


def test_given_a_bad_date_when_runs_listed_then_one_line_and_exit_2(root: Path) -> None:
    out = _footprint("runs", "--store", str(root), "--since", "last week")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "YYYY-MM-DD" in out.stderr


def test_given_a_score_name_with_a_space_when_filtered_then_its_runs_are_found(
    tmp_path: Path,
) -> None:
    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        ids = [Agent(provider=ScriptedModel(["ok"]), model="m", sink=rec).run_sync("hi").run_id
               for _ in range(2)]
    feedback(tmp_path, ids[0], "user rating", value=2)
    feedback(tmp_path, ids[1], "user rating", value=5)
    with open_store(tmp_path) as store:
        low = list_runs(store, where="'score=user rating<3'").column("run_id").to_pylist()
        assert low == [ids[0]]
        assert list_runs(store, RunQuery(scores=("user rating >= 5",))).column(
            "run_id").to_pylist() == [ids[1]]


def _moment(n: int) -> str:
    """Run ``n``'s start, to the minute (``YYYY-MM-DDTHH:MM``)."""
    started = datetime.datetime.fromtimestamp((T0 + n * 60 * 10**9) / 1e9, datetime.UTC)
    return started.strftime("%Y-%m-%dT%H:%M")


def test_given_since_and_until_moments_when_filtered_then_the_window_holds_both_ends(
    store: Store, root: Path,
) -> None:
    window = RunQuery(since=_moment(10), until=_moment(20), limit=1000, newest_first=False)
    expected = [run_id_of(n) for n in range(10, 21)]
    assert list_runs(store, window)["run_id"].to_pylist() == expected
    assert count_runs(store, where=f"since={_moment(10)} until={_moment(20)}") == 11
    assert count_runs(store, RunQuery(until="0s")) == RUNS + 1  # every run started before now
    done = _footprint("runs", "--since", _moment(10), "--until", _moment(20), "--limit", "100",
                      "--store", str(root))
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines()[2:]]
    assert listed == expected  # newest last


@pytest.mark.parametrize("until", ["yesterday", "2026-13-01", "12:00"])
def test_given_a_bad_until_when_runs_then_one_line_quoting_it_and_the_forms(
    root: Path, until: str,
) -> None:
    done = _footprint("runs", "--until", until, "--store", str(root))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"footprint runs: until={until!r}: pass an age such as 90s, 30m, 2h, 7d or 2w, or a "
        "date as YYYY-MM-DD (or YYYY-MM-DDTHH:MM)")


def test_given_limit_0_when_runs_then_every_run_is_listed_not_no_runs(root: Path) -> None:
    done = _footprint("runs", "--limit", "0", "--store", str(root))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "no runs" not in done.stdout and len(lines) == 2 + RUNS + 1
    assert lines[-1].split()[0] == LONG_RUN  # newest last


@pytest.mark.parametrize("flags", [["--user", ""], ["--release", ""], ["--env", ""],
                                   ["--session", ""]])
def test_given_an_empty_label_filter_when_no_run_matches_then_it_says_filters_not_no_runs(
    root: Path, flags: list[str],
) -> None:
    done = _footprint("runs", *flags, "--store", str(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"no runs match those filters in {root}"
