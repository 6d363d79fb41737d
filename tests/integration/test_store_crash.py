"""A real process recording a run is SIGKILLed at 20 seeded random points: everything
flushed before the kill reads back, the run is ``incomplete``, and SQL keeps working."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from recorder import open_store, verify_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WRITER = HERE / "store_writer.py"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _kill_after(store: Path, run_prefix: str, flushes: int, extra_s: float) -> tuple[str, int]:
    """Start a writer, wait for ``flushes`` acknowledged flushes (+ a random delay), SIGKILL it.

    Returns the run id and the last seq whose flush was acknowledged (-1 if none).
    """
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(store), run_prefix, "1", "1000000", "37", "200",
         "--no-end"],
        stdout=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
    )
    assert proc.stdout is not None
    last, run_id = -1, f"{run_prefix}-000"
    for _ in range(flushes):
        line = proc.stdout.readline()
        assert line.startswith("flushed"), line
        last = int(line.split()[2])
    time.sleep(extra_s)
    proc.send_signal(signal.SIGKILL)
    # flushes acknowledged after our last read but before the kill also count
    for line in proc.stdout.read().splitlines():
        if line.startswith("flushed"):
            last = int(line.split()[2])
    proc.wait()
    return run_id, last


def test_given_a_recording_process_when_sigkilled_at_20_points_then_flushed_events_survive(
    tmp_path: Path,
) -> None:
    store_dir = tmp_path / "store"
    rng = random.Random(20260509)
    acknowledged: dict[str, int] = {}
    for k in range(20):
        run_id, last = _kill_after(
            store_dir, f"crash{k:02d}", rng.randint(1, 30), rng.uniform(0.0, 0.05)
        )
        acknowledged[run_id] = last
    store = open_store(store_dir)
    runs = dict(store.rows("SELECT run_id, status FROM runs"))
    assert set(runs) == set(acknowledged)
    assert set(runs.values()) == {"incomplete"}
    for run_id, last in acknowledged.items():
        seqs = [s for (s,) in store.rows(
            "SELECT seq FROM events WHERE run_id = ? ORDER BY seq", [run_id])]
        assert seqs[: last + 1] == list(range(last + 1))
        assert seqs == list(range(len(seqs)))  # a prefix: nothing torn in the middle
        assert verify_run(store, run_id).valid
    cli = subprocess.run(
        [sys.executable, "-m", "lens.cli", "sql", "--store", str(store_dir), "--format", "csv",
         "SELECT count(*) AS n, count(DISTINCT run_id) AS runs FROM events"],
        capture_output=True, text=True, env=_env(), cwd=ROOT,
    )
    assert cli.returncode == 0, cli.stderr
    n, nruns = cli.stdout.splitlines()[1].split(",")
    assert int(nruns) == 20
    assert int(n) >= sum(last + 1 for last in acknowledged.values())
