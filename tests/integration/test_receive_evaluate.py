"""``footprint receive --evaluate FILE.py:JUDGE --sample RATE`` as a real process: the
runs it maps from OTLP traces posted to it on 127.0.0.1 are judged in the background
(the hashed sample of them, exactly), scored as ``footprint evaluate`` scores, and a
judge that raises is counted and named when the receiver stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from otlp_build import agent_trace, trace_request

from recorder import open_store
from recorder._online import sampled

ROOT = Path(__file__).resolve().parents[2]
JUDGES = '''
from recorder import Score

def words(run):
    if run.run_id.endswith("{fail}"):
        raise ValueError("no answer to count")
    return Score(name="words", value=float(len((run.answer or "").split())))
'''


def _receive(store: Path, judge: str, rate: str, traces: range) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", str(store), "--evaluate", judge, "--sample", rate],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        endpoint = first.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
        for trace in traces:
            answer = httpx.post(endpoint + "/v1/traces", timeout=10,
                                content=trace_request(agent_trace(trace)).SerializeToString(),
                                headers={"Content-Type": "application/x-protobuf"})
            assert answer.status_code == 200
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    return first + out, err


def _runs_and_scores(store: Path) -> tuple[list[str], dict[str, float]]:
    with open_store(store) as s:
        runs = [str(r) for (r,) in s.rows("SELECT run_id FROM runs ORDER BY run_id")]
        scores = {str(r): float(v) for r, v in s.rows(
            "SELECT run_id, value FROM scores WHERE given_by LIKE 'judge:%words'")}
    return runs, scores


def test_given_receive_with_a_sample_when_traces_arrive_then_exactly_the_hashed_runs_are_judged(
    tmp_path: Path,
) -> None:
    judges = tmp_path / "judges.py"
    judges.write_text(JUDGES.replace("{fail}", "never"), encoding="utf-8")
    out, _ = _receive(tmp_path / "s", f"{judges}:words", "0.5", range(50, 62))
    runs, scores = _runs_and_scores(tmp_path / "s")
    picked = {r for r in runs if sampled(r, 0.5)}
    assert len(runs) == 12 and 0 < len(picked) < 12
    assert set(scores) == picked and all(v > 0 for v in scores.values())
    assert (f"online evaluation: {len(picked)} of 12 runs sampled, {len(picked)} judged, "
            f"{len(picked)} scores recorded\n") in out, out


def test_given_receive_with_a_judge_that_raises_when_runs_arrive_then_it_is_counted_and_named(
    tmp_path: Path,
) -> None:
    first = _receive(tmp_path / "probe", "examples/feedback_loop.py:helpful", "1", range(70, 71))
    assert "1 of 1 runs sampled" in first[0], first
    probe, _ = _runs_and_scores(tmp_path / "probe")
    judges = tmp_path / "judges.py"
    judges.write_text(JUDGES.replace("{fail}", probe[0][-6:]), encoding="utf-8")
    out, _ = _receive(tmp_path / "s", f"{judges}:words", "1", range(70, 73))
    runs, scores = _runs_and_scores(tmp_path / "s")
    assert probe[0] in runs and set(scores) == set(runs) - {probe[0]}
    assert (f"the judge failed on 1 (first on {probe[0]}: ValueError: no answer to count)"
            in out), out
