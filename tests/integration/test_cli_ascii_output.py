"""An output encoding without most characters (``PYTHONIOENCODING=ascii``): every command
prints what it can't encode as an escape, never exits 70 (the real executable, a process
of its own per command)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from footprint.events import RunEnd, RunStart
from recorder import ParquetSink, Recorder

ROOT = Path(__file__).resolve().parent.parent.parent
ANSWER = "Café ✓ — 日本語 …"
T0 = 1_700_000_000_000_000_000


def _footprint(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii",
           "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "lens.cli", *argv], capture_output=True,
                          env=env, cwd=ROOT, timeout=120, encoding="ascii", errors="strict")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's store, plus a run whose question and answer are not ASCII."""
    root = tmp_path_factory.mktemp("ascii") / "store"
    demo = _footprint("demo", "--store", str(root))
    assert demo.returncode == 0, demo.stderr
    assert "\\u" in demo.stdout or "\\x" in demo.stdout  # the demo's own output escaped
    with Recorder([ParquetSink(root)]) as rec:
        rec.emit(RunStart(run_id="run-utf8", seq=0, ts=T0, user_message=ANSWER))
        rec.emit(RunEnd(run_id="run-utf8", seq=1, ts=T0 + 1, final_content=ANSWER))
    return root


@pytest.mark.parametrize("argv", [
    ["show", "run-utf8"], ["runs"], ["why", "last"], ["stats"], ["verify", "run-utf8"],
    ["doctor"], ["sql", "SELECT answer FROM runs WHERE run_id = 'run-utf8'"],
], ids=lambda argv: argv[0])
def test_given_non_ascii_text_when_a_command_prints_to_an_ascii_output_then_escapes(
    store: Path, argv: list[str],
) -> None:
    done = _footprint(*argv, "--store", str(store))  # decoding as ASCII: strict
    assert done.returncode == 0, done.stderr
    if argv[0] in ("show", "sql"):
        assert "Caf\\xe9 \\u2713" in done.stdout
