"""The command line under real signals and pipes: Ctrl-C, `| head`, `python -m footprint`.

Every case runs the installed ``footprint`` in a subprocess. SIGINT is sent once
the command's guard is up (its interrupt watcher is the process's second
thread), so what is tested is the command, not the interpreter's start-up.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_support import section as docs_section

from footprint.agent import SeededIds
from lens._examples.support_desk import make_agent
from lens.cli._exits import EXIT_CODES
from recorder import ParquetSink, Recorder

DESK = "lens._examples.support_desk:make_agent"
SLOW_DESK = str(Path(__file__).with_name("slow_desk.py")) + ":make_agent"
ROOT = Path(__file__).resolve().parents[2]
LONG_SQL = "SELECT count(*) FROM range(100000000000) t(a) WHERE a % 7 = 3"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("signals") / "store"
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        make_agent(sink=recorder, ids=SeededIds(9)).answer()
    return root


@pytest.fixture(scope="module")
def silent_endpoint() -> Iterator[str]:
    """A local TCP endpoint that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def _footprint(*argv: str) -> list[str]:
    return [sys.executable, "-m", "footprint", *argv]


def _guard_up(proc: subprocess.Popen[str], timeout_s: float = 60.0) -> None:
    """Wait until the process has a second thread (the guard's interrupt watcher)."""
    tasks = Path(f"/proc/{proc.pid}/task")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if len(list(tasks.iterdir())) >= 2:
                return
        except FileNotFoundError:
            return
        time.sleep(0.01)


@pytest.mark.parametrize(("argv", "ready"), [
    (["sql", LONG_SQL], None),
    (["why", "last", "--agent", SLOW_DESK], None),
    (["export-otlp", "last", "--timeout", "600", "--endpoint", "{endpoint}"], None),
])
def test_given_a_long_command_when_ctrl_c_arrives_then_one_line_and_exit_130(
    store: Path, silent_endpoint: str, tmp_path: Path, argv: list[str], ready: str | None,
) -> None:
    filled = [a.replace("{endpoint}", silent_endpoint) for a in argv]
    proc = subprocess.Popen(_footprint(*filled, "--store", str(store)), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    _guard_up(proc)
    if ready is not None:
        assert proc.stderr is not None
        while ready not in proc.stderr.readline():
            assert proc.poll() is None
    time.sleep(1.0)
    assert proc.poll() is None
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 10
    assert "Traceback" not in out + err
    assert err.splitlines()[-1] == f"footprint {argv[0]}: interrupted"
    assert err.count("interrupted") == 1


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_given_output_piped_to_head_when_head_exits_then_exit_141_and_nothing_on_stderr(
    store: Path, fmt: str,
) -> None:
    proc = subprocess.Popen(
        _footprint("sql", "SELECT a, 'some text' AS b FROM range(300000) t(a)",
                   "--format", fmt, "--store", str(store)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(64)
    proc.stdout.close()  # what `| head -c 64` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_given_python_m_footprint_when_run_then_it_is_the_footprint_command(store: Path) -> None:
    version = subprocess.run(_footprint("--version"), capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("footprint ")
    script = Path(sys.executable).parent / "footprint"
    same = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert same.stdout == version.stdout
    runs = subprocess.run(_footprint("runs", "--store", str(store)), capture_output=True,
                          text=True, timeout=60)
    assert runs.returncode == 0 and "complete" in runs.stdout
    empty = subprocess.run(_footprint("sql", "", "--store", str(store)), capture_output=True,
                           text=True, timeout=60)
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1


def test_given_the_exit_codes_when_help_and_docs_are_read_then_each_is_documented() -> None:
    shown = subprocess.run(_footprint("--help"), capture_output=True, text=True, timeout=60)
    table = docs_section("## Exit codes")
    for code, _ in EXIT_CODES:
        assert f"  {code:>3}  " in shown.stdout
        assert f"| {code} |" in table
    sub = subprocess.run(_footprint("sql", "--help"), capture_output=True, text=True, timeout=60)
    assert "exit codes:" in sub.stdout and "130 interrupted" in sub.stdout
