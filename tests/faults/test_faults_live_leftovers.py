"""What killed writers and other tools leave in ``live/``: junk streams are moved aside once
by ``doctor --quarantine`` (they looped: listed, not sealed, listed again), and the lock
files of writers killed with nothing unsealed are removed by the next writer or doctor,
never a live writer's (23 of them stayed after 66 kills)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from footprint.events import RunStart
from recorder import ParquetSink, Recorder
from recorder.write._adopt import writer_alive

ROOT = Path(__file__).resolve().parent.parent.parent
_IDLE_WRITER = """
import sys, time
from recorder import ParquetSink, Recorder
rec = Recorder([ParquetSink(sys.argv[1], adopt=False)])
print("ready", flush=True)
time.sleep(60)
"""


def _doctor(store: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", "doctor", *flags, "--store",
                           str(store)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _kill_idle_writers(store: Path, n: int) -> None:
    """``n`` real writer processes that hold their lock and no segment, SIGKILLed."""
    procs = [subprocess.Popen([sys.executable, "-c", _IDLE_WRITER, str(store)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(n)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def _locks(store: Path) -> set[Path]:
    return set((store / "live").glob("*.lock"))


def test_given_junk_streams_in_live_when_doctor_quarantines_then_moved_once_and_clean(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    with Recorder([ParquetSink(store)]) as rec:
        rec.emit(RunStart(run_id="r", seq=0, ts=1_700_000_000_000_000_000, user_message="q"))
    live = store / "live"
    junk = [live / "junk.events.arrows", live / "stray.arrows",
            live / "20261205T000000-1-deadbeef-00001.notes.arrows"]
    for path in junk:
        path.write_bytes(os.urandom(200))
    listed = _doctor(store)
    assert listed.returncode == 1
    assert all(f"damaged  {path}" in listed.stdout for path in junk), listed.stdout
    repaired = _doctor(store, "--quarantine")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert sorted((store / "quarantine" / "live").iterdir()) == sorted(
        store / "quarantine" / "live" / p.name for p in junk)
    for _ in range(2):  # clean, and stays clean
        again = _doctor(store)
        assert again.returncode == 0, again.stdout
        assert "healthy" in again.stdout


def test_given_writers_killed_with_nothing_unsealed_when_the_next_writer_starts_then_their_locks_go(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    _kill_idle_writers(store, 3)
    assert len(_locks(store)) == 3
    with Recorder([ParquetSink(store, adopt=False)]) as alive:  # lives on, no segment yet
        own = _locks(store) - {p for p in _locks(store) if not writer_alive(store, p.stem)}
        assert len(own) == 1
        Recorder([ParquetSink(store)]).close()  # a later writer: starts, adopts, stops
        assert _locks(store) == own  # the killed writers' locks gone, the live one kept
        (lock,) = own
        assert writer_alive(store, lock.stem)
        _kill_idle_writers(store, 2)
        listed = _doctor(store)
        assert listed.returncode == 1 and listed.stdout.count("stale    ") == 2
        repaired = _doctor(store, "--quarantine")
        assert repaired.returncode == 0 and repaired.stdout.count("removed  ") == 2
        assert _locks(store) == own and writer_alive(store, lock.stem)
        assert _doctor(store).returncode == 0
        alive.emit(RunStart(run_id="a", seq=0, ts=1_700_000_000_000_000_000, user_message="q"))
        assert alive.flush()
    assert _locks(store) == set()
