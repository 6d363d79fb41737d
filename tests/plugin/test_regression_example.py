"""examples/regression: the recorded support-desk conversation passes, the changed prompt fails."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lens.playback._snapshot import Recording

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "regression"


def _copy(pytester: pytest.Pytester) -> Path:
    target = pytester.path / "regression"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*args, "-p", "no:textual-snapshot", "-p", "no:asyncio")


def test_given_the_example_recording_when_its_test_runs_then_it_passes(
    pytester: pytest.Pytester,
) -> None:
    folder = _copy(pytester)
    recording = Recording.load(folder / "support_desk")
    assert len(recording.run_ids()) == 2 and recording.manifest["turns"] == 2
    _run(pytester, str(folder / "test_support_desk.py")).assert_outcomes(passed=2)


def test_given_the_changed_prompt_variant_when_run_then_replay_fails_readably_and_decisions_hold(
    pytester: pytest.Pytester,
) -> None:
    folder = _copy(pytester)
    result = _run(pytester, str(folder / "changed_prompt.py"))
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines([
        "recorded run diverged on replay:",
        "replay of * (turn 1 of its conversation): DIVERGED at turn 0",
        "first divergent decision: seq 16 recorded / 16 replayed · engine#1 · iteration 1",
        "model request at llm#1 is not in the recording; it differs in:",
        "  system prompt: first differs at character 174 *",
        "    replayed: …for refund requests. Keep every answer to one sentence.*",
    ])


def test_given_record_py_when_run_again_then_it_writes_the_same_recording(
    tmp_path: Path,
) -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE / "record.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    for name in ("recording.json", "events.jsonl", "blobs.jsonl", "decisions.json"):
        fresh = (tmp_path / "support_desk" / name).read_text(encoding="utf-8")
        assert fresh == (EXAMPLE / "support_desk" / name).read_text(encoding="utf-8"), name
