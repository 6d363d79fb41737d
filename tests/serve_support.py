"""``footprint lens --serve`` as a real subprocess on a free 127.0.0.1 port, for the tests
that drive it (tests/integration/test_cli_serve.py with aiohttp,
tests/integration/test_serve_browser.py with a headless Chromium)."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN4 = "0190cccc-0000-7000-8000-000000000004"  # the trends store's newest run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def token_in(line: str) -> str:
    """The token in the URL ``footprint lens --serve`` printed."""
    found = re.search(r"\?token=([A-Za-z0-9_-]+)", line)
    assert found is not None, f"no token in {line!r}"
    return found.group(1)


def lens_argv(*args: str) -> list[str]:
    """``footprint lens ARGS`` as this interpreter runs it."""
    return [sys.executable, "-m", "lens.cli", "lens", *args]


def start_serving(store: Path, *extra: str) -> tuple[subprocess.Popen[str], str, str]:
    """``footprint lens --serve`` on a free port, once it listens: (the process, its base
    URL, the line it printed)."""
    port = free_port()
    proc = subprocess.Popen(lens_argv("--serve", "--port", str(port), "--store", str(store),
                                      *extra),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        deadline = time.monotonic() + 60
        while True:  # the line comes before the socket listens
            with socket.socket() as s, contextlib.suppress(OSError):
                s.connect(("127.0.0.1", port))
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.1)
    except BaseException:
        stop(proc)
        raise
    return proc, f"http://127.0.0.1:{port}", line


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM, then the exit (SIGKILL if it hangs, so no test leaves a server behind)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


@contextlib.contextmanager
def serving(store: Path, *extra: str) -> Iterator[tuple[str, str]]:
    """``footprint lens --serve`` on a free port: (its base URL, the line it printed)."""
    proc, base, line = start_serving(store, *extra)
    try:
        yield base, line
    finally:
        stop(proc)
