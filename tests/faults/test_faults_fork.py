"""A Recorder created before ``fork()`` keeps recording in every forked worker.

Real processes: a parent makes the Recorder, forks workers that each answer
with a real Agent and exit; every answer from every process is in the
store once, and every run verifies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from recorder import RunQuery, list_runs, open_store, verify_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORKERS, RUNS = 3, 5


def test_given_a_recorder_made_before_fork_when_workers_answer_then_every_run_is_stored(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, str(HERE / "fork_workers.py"), str(store), str(WORKERS), str(RUNS)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    answered = {line.split()[1] for line in done.stdout.splitlines()
                if line.startswith("answered")}
    assert len(answered) == 1 + WORKERS * RUNS
    with open_store(store) as reader:
        stored = list_runs(reader, RunQuery(limit=100))
        assert set(stored["run_id"].to_pylist()) == answered
        assert set(stored["status"].to_pylist()) == {"complete"}
        for run_id in answered:
            assert verify_run(reader, run_id).valid, run_id
    assert not list((store / "live").glob("*.arrows"))  # every writer sealed its own
