"""`footprint evaluate` keeps its work: Ctrl-C (SIGINT to a real subprocess) keeps every
score a judge finished, a second Ctrl-C stops at once, a re-run judges only what is
left (no run scored twice), ``--force`` judges again; every run verifies after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from footprint import Agent, ScriptedModel
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, open_store, verify_run

ROOT = Path(__file__).resolve().parents[2]
JUDGES = '''
import os, time
from pathlib import Path
from recorder import Score

def slow(run):
    """Sleeps; each finished judgement leaves a marker file (written before it returns)."""
    index = int(run.answer.split()[-1])
    time.sleep(float(os.environ["JUDGE_SLEEP"]) if index >= int(os.environ["JUDGE_FAST"])
               else 0.01)
    Path(os.environ["JUDGE_MARKS"], run.run_id).touch()
    return Score(name="ok", value=1.0)
'''
RUNS = 12


def _store(path: Path, runs: int = RUNS) -> list[str]:
    with Recorder(sinks=[ParquetSink(path)]) as rec:
        return [Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec)
                .run_sync("hi").run_id for i in range(runs)]


def _counts(path: Path) -> tuple[int, int]:
    """``(scores, runs scored)`` over the ``scores`` view."""
    with open_store(path) as store:
        ((scores, runs),) = store.rows("SELECT count(*), count(DISTINCT run_id) FROM scores")
    return int(scores), int(runs)


def _all_verify(path: Path, ids: list[str]) -> bool:
    with open_store(path) as store:
        return all(verify_run(store, run_id).valid and not verify_run(store, run_id).note
                   for run_id in ids)


def _evaluate(tmp_path: Path, *, sleep: float, fast: int) -> subprocess.Popen[str]:
    (tmp_path / "judges.py").write_text(JUDGES, encoding="utf-8")
    (tmp_path / "marks").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
           "JUDGE_SLEEP": str(sleep), "JUDGE_FAST": str(fast),
           "JUDGE_MARKS": str(tmp_path / "marks")}
    return subprocess.Popen(
        [sys.executable, "-m", "lens.cli", "evaluate", "--judge", "judges:slow",
         "--concurrency", "2", "--store", str(tmp_path / "s")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _marks(tmp_path: Path) -> set[str]:
    return {p.name for p in (tmp_path / "marks").iterdir()}


def _wait_for(tmp_path: Path, marks: int, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while len(_marks(tmp_path)) < marks:
        assert time.monotonic() < deadline, "the judge never got that far"
        time.sleep(0.02)


def test_given_a_slow_judge_when_ctrl_c_then_the_finished_scores_are_kept_and_none_added_twice(
    tmp_path: Path,
) -> None:
    ids = _store(tmp_path / "s")
    proc = _evaluate(tmp_path, sleep=0.3, fast=0)
    _wait_for(tmp_path, 3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    judged = _marks(tmp_path)
    scores, runs = _counts(tmp_path / "s")
    assert 3 <= scores == runs == len(judged) < RUNS, (out, err)
    assert f"{scores} scores recorded on {scores} runs" in out
    assert "interrupted; the scores above are kept" in err
    assert _all_verify(tmp_path / "s", ids)
    rerun = _evaluate(tmp_path, sleep=0.01, fast=0)
    out, err = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, err
    assert f"{scores} runs already scored by judges:slow skipped" in out
    assert _counts(tmp_path / "s") == (RUNS, RUNS)
    assert _all_verify(tmp_path / "s", ids)


def test_given_judges_stuck_when_ctrl_c_twice_then_it_stops_at_once_keeping_the_finished(
    tmp_path: Path,
) -> None:
    ids = _store(tmp_path / "s")
    proc = _evaluate(tmp_path, sleep=120, fast=4)  # runs 4.. never finish in the test
    _wait_for(tmp_path, 4)
    time.sleep(0.3)  # the loop has seen them finish
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert proc.poll() is None  # the first Ctrl-C waits for the judges running
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert "4 scores recorded on 4 runs" in out
    assert proc.returncode == 130 and time.monotonic() - began < 10, err
    assert "2 judges abandoned" in err
    assert _counts(tmp_path / "s") == (4, 4)
    assert _all_verify(tmp_path / "s", ids)


def test_given_scored_runs_when_evaluate_with_force_then_every_run_is_judged_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    ids = _store(tmp_path / "s", runs=3)
    (tmp_path / "judges.py").write_text(JUDGES, encoding="utf-8")
    (tmp_path / "marks").mkdir()
    for name, value in (("JUDGE_SLEEP", "0"), ("JUDGE_FAST", "0"),
                        ("JUDGE_MARKS", str(tmp_path / "marks"))):
        monkeypatch.setenv(name, value)
    argv = ["evaluate", "--judge", f"{tmp_path / 'judges.py'}:slow",
            "--store", str(tmp_path / "s")]
    assert footprint(argv) == 0
    assert footprint(argv) == 0
    assert "3 runs already scored by" in capsys.readouterr().out
    assert _counts(tmp_path / "s") == (3, 3)
    assert footprint([*argv, "--force"]) == 0
    assert _counts(tmp_path / "s") == (6, 3)
    assert _all_verify(tmp_path / "s", ids)
