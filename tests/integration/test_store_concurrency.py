"""Eight processes write one store at once: 80,000 rows, no duplicates, no lost runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from recorder import open_store, verify_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_given_8_processes_writing_one_store_when_all_finish_then_exactly_80000_rows(
    tmp_path: Path,
) -> None:
    store_dir = tmp_path / "shared"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "store_writer.py"), str(store_dir), f"p{i}", "10", "1000",
             "250", "3000"],
            stdout=subprocess.DEVNULL, env=env, cwd=ROOT,
        )
        for i in range(8)
    ]
    assert [p.wait(timeout=240) for p in procs] == [0] * 8
    store = open_store(store_dir)
    total, distinct, runs = store.rows(
        "SELECT count(*), count(DISTINCT (run_id, seq)), count(DISTINCT run_id) FROM events"
    )[0]
    assert (total, distinct, runs) == (80_000, 80_000, 80)
    statuses = store.rows("SELECT status, count(*), min(events), max(events) FROM runs GROUP BY 1")
    assert statuses == [("complete", 80, 1000, 1000)]
    assert all(verify_run(store, r).valid for r in store.run_ids()[:: 9])
    assert not list((store_dir / "live").glob("*.arrows"))
    assert len(list((store_dir / "events").rglob("*.parquet"))) >= 8
