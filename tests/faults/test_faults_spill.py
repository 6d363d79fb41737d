"""A reader SIGKILLed while it holds a spill folder: the next reader to spill removes it,
and never the folder of a reader that still runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

from footprint.events import RunStart
from recorder.store._livespill import LiveSpill
from recorder.write._rows import EVENT_SCHEMA, RowBuilder

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _live_stream(path: Path) -> None:
    builder = RowBuilder()
    builder.add_all([RunStart(run_id="r", seq=n, ts=n, user_message="q") for n in range(5)])
    events, _ = builder.take()
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, EVENT_SCHEMA) as writer:
        for batch in events:
            writer.write_batch(batch)


def _reader(stream: Path, temp: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, str(HERE / "spill_reader.py"), str(stream)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temp)})
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_given_a_killed_readers_spill_folder_when_another_reader_spills_then_it_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    stream = tmp_path / "seg.events.arrows"
    _live_stream(stream)
    killed, killed_dir = _reader(stream, temp)
    alive, alive_dir = _reader(stream, temp)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert killed_dir.is_dir() and alive_dir.is_dir()
        monkeypatch.setattr(tempfile, "tempdir", str(temp))
        spill = LiveSpill(keep_rows=1)
        _, spilled = spill.read(stream, EVENT_SCHEMA)
        assert spilled is not None
        assert not killed_dir.exists()  # the killed reader's folder: swept
        assert alive_dir.is_dir()  # a living reader's: kept
        spill.close()
        assert not spilled.parent.exists()
    finally:
        alive.kill()
        alive.wait(timeout=30)
