"""Trends (``recorder.store._trends``, ``footprint stats``) against a store whose numbers are
known by hand (``tests/trends_store.py``)."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

import pytest
from trends_store import DAY1, write_trends_store

from footprint._errors import ConfigError
from recorder import RunQuery, TrendQuery, open_store, trends
from recorder.store._trends import trend_series

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_trends_store(tmp_path_factory.mktemp("trends") / "store")


def _rows(store_path: Path, query: TrendQuery) -> list[dict[str, object]]:
    with open_store(store_path) as store:
        return trends(store, query).to_pylist()


def _key(row: dict[str, object]) -> tuple[str, object]:
    stamp = row["bucket"]
    assert isinstance(stamp, datetime.datetime)
    return stamp.strftime("%m-%d %H"), row["group"]


def test_given_four_runs_on_two_days_when_trends_by_day_then_the_numbers_are_the_known_ones(
    store_path: Path,
) -> None:
    day1, day2 = _rows(store_path, TrendQuery())
    assert (day1["runs"], day1["failed"], day1["tokens"], day1["decisions"]) == (3, 1, 45, 7)
    assert day1["error_rate"] == pytest.approx(1 / 3)
    # latencies of the ended runs only (r3 never ended): 100 and 300 ms
    assert (day1["p50_ms"], day1["p90_ms"], day1["p99_ms"]) == pytest.approx((200, 280, 298))
    assert day1["tokens_per_run"] == pytest.approx(15)
    assert (day2["runs"], day2["failed"], day2["tokens"], day2["p50_ms"]) == (1, 0, 7, 1000)


def test_given_runs_with_skills_when_grouped_by_skill_hourly_then_a_run_counts_in_each_skill(
    store_path: Path,
) -> None:
    rows = {_key(r): r for r in _rows(store_path, TrendQuery(by="hour", group_by="skill"))}
    assert set(rows) == {("01-01 00", "billing"), ("01-01 00", "refunds"),
                         ("01-01 05", "billing"), ("01-01 05", "refunds"), ("01-02 12", None)}
    assert rows[("01-01 00", "refunds")]["error_rate"] == 1.0
    assert rows[("01-01 00", "billing")]["p50_ms"] == pytest.approx(100)
    assert rows[("01-01 05", "billing")]["p50_ms"] is None  # r3 never ended
    assert rows[("01-01 05", "refunds")]["decisions"] == 3


def test_given_releases_and_models_when_grouped_then_each_group_has_its_own_runs(
    store_path: Path,
) -> None:
    releases = {_key(r): r["runs"] for r in _rows(store_path, TrendQuery(group_by="release"))}
    assert releases == {("01-01 00", "1.4"): 2, ("01-01 00", "1.5"): 1, ("01-02 00", "1.5"): 1}
    models = {_key(r): r["tokens"] for r in _rows(store_path, TrendQuery(group_by="model"))}
    assert models == {("01-01 00", "a"): 15, ("01-01 00", "b"): 30, ("01-02 00", "a"): 7}


def test_given_a_since_day_when_trends_then_older_runs_are_left_out(store_path: Path) -> None:
    rows = _rows(store_path, TrendQuery(runs=RunQuery(since="2026-01-02")))
    assert [(r["runs"], r["tokens"]) for r in rows] == [(1, 7)]


def test_given_trend_rows_when_made_series_then_gaps_are_none_and_labels_are_buckets(
    store_path: Path,
) -> None:
    with open_store(store_path) as store:
        labels, series = trend_series(trends(store, TrendQuery(group_by="model")))
    assert labels == ["2026-01-01", "2026-01-02"]
    assert series["p50_ms"] == {"a": [100.0, 1000.0], "b": [300.0, None]}
    assert series["decisions_per_run"]["a"] == [5 / 2, 1.0]
    with open_store(store_path) as store:
        _labels, by_skill = trend_series(trends(store, TrendQuery(group_by="skill")))
    assert by_skill["tokens_per_run"] == {"billing": [7.5, None], "refunds": [15.0, None],
                                          "(none)": [None, 7.0]}


@pytest.mark.parametrize(("kwargs", "hint"), [({"by": "dya"}, "did you mean 'day'"),
                                              ({"group_by": "skills"}, "did you mean 'skill'")])
def test_given_a_misspelt_bucket_or_group_when_queried_then_config_error_names_the_fix(
    kwargs: dict[str, str], hint: str,
) -> None:
    with pytest.raises(ConfigError, match=hint):
        TrendQuery(**kwargs)  # type: ignore[arg-type]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", "stats", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)


def test_given_the_store_when_footprint_stats_then_a_table_and_plots_are_printed(
    store_path: Path,
) -> None:
    done = _cli("--store", str(store_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["bucket", "runs", "errors", "p50", "ms", "p90", "ms", "p99",
                                "ms", "tokens", "tok/run", "decisions", "cost"]
    assert lines[1].split() == ["2026-01-01", "3", "33.3%", "200", "280", "298", "45", "15", "7",
                                "—", "+3", "unpriced"]  # models 'a' and 'b' have no price
    assert "latency p50 (ms)" in done.stdout and "error rate" in done.stdout
    assert "\x1b[" not in done.stdout  # no colour codes in a pipe


def test_given_the_store_when_stats_as_json_grouped_by_release_then_rows_match(
    store_path: Path,
) -> None:
    done = _cli("--store", str(store_path), "--group-by", "release", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["bucket"][:10], r["group"], r["runs"]) for r in rows] == [
        ("2026-01-01", "1.4", 2), ("2026-01-01", "1.5", 1), ("2026-01-02", "1.5", 1)]


def test_given_a_bad_bucket_when_footprint_stats_then_one_line_and_exit_2(
    store_path: Path,
) -> None:
    done = _cli("--store", str(store_path), "--by", "week")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "week" in done.stderr


def test_given_a_store_whose_calls_are_priced_when_trends_then_cost_and_unpriced_runs_show(
    tmp_path: Path,
) -> None:
    root = write_trends_store(tmp_path / "store")
    with open_store(root) as store:  # models 'a' and 'b' are in no price table
        day1, day2 = trends(store).to_pylist()
    assert (day1["cost_usd"], day1["unpriced"]) == (None, 3)
    # the store's prices.json prices model 'a' at $1,000 per million output tokens
    (root / "prices.json").write_text(json.dumps({"a": {"input_mtok": 0, "output_mtok": 1000}}))
    with open_store(root) as store:
        day1, day2 = trends(store).to_pylist()
    assert (day1["cost_usd"], day1["unpriced"]) == (pytest.approx(0.005), 1)  # r2 unpriced
    assert (day2["cost_usd"], day2["unpriced"]) == (pytest.approx(0.003), 0)


def test_given_many_buckets_when_stats_with_last_then_the_table_keeps_the_newest(
    store_path: Path,
) -> None:
    done = _cli("--store", str(store_path), "--by", "hour", "--last", "1", "--no-plot")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[:3] for line in lines[1:-1]] == [["2026-01-02", "12:00", "1"]]
    assert lines[-1] == "(1 newest of 3 hours; --last N shows more)"


@pytest.mark.parametrize(("runs", "expected"), [
    (RunQuery(status=("failed",)), [(1, 30)]),  # on the outline's own rows
    (RunQuery(model="b"), [(1, 30)]),
    (RunQuery(answer="done"), [(1, 15), (1, 7)]),  # through the runs list: r1 and r4
])
def test_given_a_run_filter_when_trends_then_only_matching_runs_count(
    store_path: Path, runs: RunQuery, expected: list[tuple[int, int]],
) -> None:
    rows = _rows(store_path, TrendQuery(runs=runs))
    assert [(r["runs"], r["tokens"]) for r in rows] == expected


def _labelled(root: Path) -> Path:
    """Three runs on one day: r1 (user u1, env prod, tags a and b; its end in a second file),
    r2 (user u2, no env, tag a twice), r3 (no labels)."""
    from footprint.events import RunEnd, RunStart
    from recorder import ParquetSink, Recorder

    def ids(n: int) -> str:
        return f"0190dddd-0000-7000-8000-{n:012d}"

    starts = [RunStart(run_id=ids(1), seq=0, ts=DAY1, user_message="r1", user_id="u1",
                       environment="prod", tags=("a", "b")),
              RunStart(run_id=ids(2), seq=0, ts=DAY1 + 1, user_message="r2", user_id="u2",
                       tags=("a", "a")),
              RunStart(run_id=ids(3), seq=0, ts=DAY1 + 2, user_message="r3")]
    for batch in (starts, [RunEnd(run_id=ids(1), seq=1, ts=DAY1 + 5, iteration=1,
                                  final_content="done")]):
        recorder = Recorder(sinks=[ParquetSink(root)])  # one file per recorder
        try:
            for event in batch:
                recorder.emit(event)
        finally:
            recorder.close()
    return root


@pytest.mark.parametrize(("group_by", "expected"), [
    ("user", {"u1": 1, "u2": 1, None: 1}),
    ("env", {"prod": 1, None: 2}),
    ("tag", {"a": 2, "b": 1, None: 1}),
])
def test_given_labelled_runs_in_two_files_when_grouped_by_label_then_a_run_counts_per_label(
    tmp_path: Path, group_by: str, expected: dict[str | None, int],
) -> None:
    root = _labelled(tmp_path / "store")
    rows = _rows(root, TrendQuery(group_by=group_by))
    assert {r["group"]: r["runs"] for r in rows} == expected
