"""Habits and traps a notebook or CLI user falls into (issue 25, items 7 and 10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from footprint import StepClock
from lens._examples.support_desk import make_agent
from recorder import ParquetSink, Recorder, open_store

FOOTPRINT = [sys.executable, "-m", "lens.cli"]
EXECUTABLE = Path(sys.executable).with_name("footprint")
"""The installed command: unlike ``python -m``, it does not put the current directory first
on the import path."""


def _record(store: Path, clock: StepClock | None = None) -> str:
    with Recorder(sinks=[ParquetSink(store)]) as recorder:
        agent = make_agent(sink=recorder, clock=clock) if clock else make_agent(sink=recorder)
        return agent.run_sync("Refund order A1001, please").run_id


def test_given_a_test_clock_run_after_a_real_one_when_last_is_resolved_then_it_is_the_newest(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    done = subprocess.run([*FOOTPRINT, "demo", "--store", str(store)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    dated_2026_01_01 = _record(store, StepClock())
    with open_store(store) as s:
        assert s.resolve_run("last") == dated_2026_01_01
        assert s.run_ids()[-1] == dated_2026_01_01
    shown = subprocess.run([*FOOTPRINT, "show", "last", "--store", str(store)],
                           capture_output=True, text=True, timeout=120, check=False)
    assert shown.returncode == 0 and dated_2026_01_01[:13] in shown.stdout


@pytest.mark.parametrize("ref", ["desk_agent:make_agent", "desk_agent:AGENT"])
def test_given_a_module_in_the_current_directory_when_named_by_agent_then_it_loads(
    tmp_path: Path, ref: str,
) -> None:
    (tmp_path / "desk_agent.py").write_text(
        "from lens._examples.support_desk import make_agent\nAGENT = make_agent()\n",
        encoding="utf-8")
    store = tmp_path / "store"
    _record(store)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    assert EXECUTABLE.exists(), "install the package: pip install -e '.[dev]'"
    done = subprocess.run([str(EXECUTABLE), "replay", "last", "--agent", ref, "--store",
                           str(store)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
