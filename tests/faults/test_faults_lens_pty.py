"""The lens in a real terminal (a pty) and without one.

A long query in the SQL console is stopped by Ctrl-C: the process ends in
seconds instead of keeping a core busy; ``footprint lens`` without a
terminal ends at once with one line instead of spinning.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store_scale import write_many_runs

ROOT = Path(__file__).resolve().parent.parent.parent
LONG = "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lens") / "store"
    write_many_runs(root, 3)
    return root


def _read_until(fd: int, wanted: bytes, timeout_s: float) -> bytes:
    seen, end = b"", time.monotonic() + timeout_s
    while wanted not in seen and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def test_given_a_long_console_query_when_ctrl_c_then_the_lens_ends_within_seconds(
    store: Path,
) -> None:
    main, child = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color",
           "COLUMNS": "120", "LINES": "40"}
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "lens", "--store", str(store)],
                            stdin=child, stdout=child, stderr=child, env=env, cwd=ROOT,
                            start_new_session=True)
    os.close(child)
    try:
        assert b"runs" in _read_until(main, b"runs", 60)
        time.sleep(1.0)
        os.write(main, b":")
        _read_until(main, b"SQL", 20)
        time.sleep(0.5)
        os.write(main, LONG.encode() + b"\r")
        assert b"running" in _read_until(main, b"running", 20)
        time.sleep(1.0)  # the query is in DuckDB now
        os.write(main, b"\x03")  # Ctrl-C, as the terminal sends it in raw mode
        started = time.monotonic()
        while proc.poll() is None and time.monotonic() - started < 15:
            _read_until(main, b"\x00never", 0.2)
        assert proc.poll() is not None, "the lens kept running after Ctrl-C"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(main)


def test_given_no_terminal_when_footprint_lens_runs_then_one_line_and_exit_2(
    store: Path,
) -> None:
    done = subprocess.run([sys.executable, "-m", "lens.cli", "lens", "--store", str(store)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "terminal" in done.stderr
