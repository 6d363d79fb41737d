"""A writer SIGKILLed with a live segment: the next writer (or ``adopt_orphans``) seals it
into Parquet, nothing flushed is lost, and a live writer's segments are never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from footprint.events import RunEnd, RunStart
from recorder import ParquetSink, Recorder, adopt_orphans, open_store, verify_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CHILD = HERE / "faults_write_child.py"


def _killed_writer(store: Path, events: int) -> None:
    """A real writer process: flushes ``events`` events of an open run, then is SIGKILLed."""
    proc = subprocess.Popen([sys.executable, str(CHILD), str(store), "orphan", str(events)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "flushed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _live(store: Path) -> list[Path]:
    return sorted((store / "live").glob("*.arrows"))


def test_given_a_killed_writers_segment_when_a_new_writer_starts_then_it_is_sealed(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    _killed_writer(store, 5_000)
    assert len(_live(store)) == 3  # events, blobs, chain: orphaned
    with Recorder([ParquetSink(store)]) as rec:  # a later writer, recording its own run
        rec.emit(RunStart(run_id="later", seq=0, ts=1_700_000_000_000_000_000, user_message="q"))
        rec.emit(RunEnd(run_id="later", seq=1, ts=1_700_000_000_000_000_001, final_content="a"))
    assert _live(store) == []
    assert list((store / "live").glob("*.lock")) == []
    assert not [p for p in store.rglob(".*.tmp")]  # the dead writer's half-written files
    reader = open_store(store)
    assert reader.rows("SELECT run_id, events, status FROM runs ORDER BY run_id") == [
        ("later", 2, "complete"), ("orphan-run", 5_000, "incomplete")]
    assert verify_run(reader, "orphan-run").valid
    assert len(reader.files.events) == 2 and not reader.files.live_events


def test_given_a_live_writer_and_a_killed_one_when_adopting_then_only_the_dead_ones_segments_move(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    _killed_writer(store, 300)
    orphans = {p.name.split(".")[0] for p in _live(store)}
    rec = Recorder([ParquetSink(store, adopt=False)])
    rec.emit(RunStart(run_id="alive", seq=0, ts=1_700_000_000_000_000_000, user_message="q"))
    assert rec.flush()
    alive = {p.name.split(".")[0] for p in _live(store)} - orphans
    assert len(alive) == 1
    assert adopt_orphans(store) == sorted(orphans)
    assert {p.name.split(".")[0] for p in _live(store)} == alive  # never a live writer's
    assert adopt_orphans(store) == []  # twice is harmless
    rec.close()
    reader = open_store(store)
    assert dict(reader.rows("SELECT run_id, events FROM runs")) == {"orphan-run": 300, "alive": 1}


def test_given_a_killed_writers_segment_when_doctor_repairs_then_it_is_sealed_and_a_live_one_kept(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    _killed_writer(store, 200)
    dead = set(_live(store))
    rec = Recorder([ParquetSink(store, adopt=False)])  # a live writer beside it
    rec.emit(RunStart(run_id="alive", seq=0, ts=1_700_000_000_000_000_000, user_message="q"))
    assert rec.flush()
    alive = set(_live(store)) - dead
    try:
        def doctor(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "lens.cli", "doctor", *args,
                                   "--store", str(store)], capture_output=True, text=True,
                                  timeout=120, check=False, cwd=ROOT)

        listed = doctor()
        assert listed.returncode == 1 and listed.stdout.count("orphaned segment") == 1
        repaired = doctor("--quarantine")
        assert repaired.returncode == 0, repaired.stdout + repaired.stderr
        assert "sealed   segment" in repaired.stdout
        assert set(_live(store)) == alive  # the live writer's streams, untouched
        assert doctor().returncode == 0
        reader = open_store(store)
        assert verify_run(reader, "orphan-run").valid
        assert len(reader.files.events) == 1
    finally:
        rec.close()
