"""The pytest plugin, run inside pytester: a passing replay, a failing one, the snapshot update.

Each test records the support desk into a real store, exports it with
``footprint snapshot`` and runs pytest on the written test module (the
plugin comes in through its ``pytest11`` entry point, as for a user).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder

DESK = "lens._examples.support_desk:make_agent"


def _recorded(root: Path) -> Path:
    """The desk's default run recorded into ``root/store``, snapshot into ``root/recordings``."""
    recorder = Recorder(sinks=[ParquetSink(root / "store")])
    try:
        make_agent(sink=recorder).answer()
    finally:
        recorder.close()
    assert footprint(["snapshot", "last", "--agent", DESK, "-o", str(root / "recordings"),
                      "--name", "desk", "--store", str(root / "store")]) == 0
    return root / "recordings"


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in process; the Textual snapshot plugin keeps one temp dir per process, so off."""
    return pytester.runpytest(*args, "-p", "no:textual-snapshot", "-p", "no:asyncio")


def _variant_module(pytester: pytest.Pytester, body: str) -> None:
    pytester.makepyfile(variant=(
        "from lens._examples.support_desk import SYSTEM_PROMPT, make_agent\n\n"
        f"def make(sink=None):\n    return {body}\n"))


def test_given_a_snapshot_when_pytest_runs_its_module_then_both_assertions_pass(
    pytester: pytest.Pytester,
) -> None:
    recordings = _recorded(pytester.path)
    assert sorted(p.name for p in recordings.iterdir()) == ["desk", "test_desk.py"]
    result = _run(pytester, str(recordings / "test_desk.py"))
    result.assert_outcomes(passed=2)


def test_given_a_changed_prompt_when_replayed_then_the_failure_shows_the_divergence(
    pytester: pytest.Pytester,
) -> None:
    recordings = _recorded(pytester.path)
    _variant_module(pytester, "make_agent(sink=sink).variant(system_prompt=SYSTEM_PROMPT + "
                              "' Be kind.')")
    pytester.makepyfile(test_changed=(
        "from variant import make\n\n"
        "def test_changed(footprint_replay):\n"
        f"    footprint_replay.assert_replays({str(recordings / 'desk')!r}, make)\n"))
    result = _run(pytester, "test_changed.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "recorded run diverged on replay:",
        "replay of *: DIVERGED",
        "first divergent decision: seq 16 recorded / 16 replayed · engine#1 · iteration 1",
        "  expected: context.injected: system-prompt ← base #* (baseline)",
        "  got:      context.injected: system-prompt ← base #* (baseline)",
        "model request at llm#1 is not in the recording; it differs in:",
        "  system prompt: first differs at character 174 *",
        "*replayed: …for refund requests. Be kind.*",
    ])
    assert "Traceback" not in result.stdout.str()


def test_given_changed_decisions_when_updated_then_the_snapshot_is_rewritten_and_passes(
    pytester: pytest.Pytester,
) -> None:
    recordings = _recorded(pytester.path)
    snapshot = recordings / "desk" / "decisions.json"
    before = snapshot.read_text(encoding="utf-8")
    _variant_module(pytester, f"make_agent(sink=sink, without=({PLANTED_FACT!r},))")
    pytester.makepyfile(test_decisions=(
        "from variant import make\n\n"
        "def test_decisions(footprint_replay):\n"
        f"    footprint_replay.assert_decisions({str(recordings / 'desk')!r}, make)\n"))
    failed = _run(pytester, "test_decisions.py")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "the decisions changed (*decisions.json; accept with `pytest --footprint-update`):",
        "--- recorded decisions", "+++ decisions now",
        f'-*"system-prompt": "base, billing, tone, refund-policy, {PLANTED_FACT}, *',
        '-*"answer": "APPROVED: order A-1047 is 47 days old, within the 60-day refund *',
        '+*"answer": "DECLINED: order A-1047 is 47 days old, outside the 30-day refund *',
    ])
    assert snapshot.read_text(encoding="utf-8") == before
    _run(pytester, "test_decisions.py", "--footprint-update").assert_outcomes(passed=1)
    after = json.loads(snapshot.read_text(encoding="utf-8"))
    assert after["turns"][0]["answer"].startswith("DECLINED")
    _run(pytester, "test_decisions.py").assert_outcomes(passed=1)


def test_given_a_link_planted_at_the_snapshot_when_updated_then_refused_naming_it_and_the_fix(
    pytester: pytest.Pytester,
) -> None:
    recordings = _recorded(pytester.path)
    snapshot = recordings / "desk" / "decisions.json"
    victim = pytester.path / "victim.txt"
    victim.write_text("any file the user can write\n", encoding="utf-8")
    snapshot.unlink()
    snapshot.symlink_to(victim)
    result = _run(pytester, str(recordings / "test_desk.py"), "-k", "snapshot",
                  "--footprint-update")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([f"*{str(snapshot)!r} is a symbolic link (to {str(victim)!r}); "
                                 "footprint writes nothing through a link: remove it (rm "
                                 f"{snapshot}) and run again"])
    assert victim.read_text(encoding="utf-8") == "any file the user can write\n"
    assert snapshot.is_symlink()


def test_given_no_decision_snapshot_when_asserted_then_it_fails_naming_the_update_flag(
    pytester: pytest.Pytester,
) -> None:
    recordings = _recorded(pytester.path)
    (recordings / "desk" / "decisions.json").unlink()
    result = _run(pytester, str(recordings / "test_desk.py"), "-k", "snapshot")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["no decision snapshot at *; write it with "
                                 "`pytest --footprint-update`"])


def test_given_a_run_id_and_a_store_when_asserted_then_the_store_is_read(
    pytester: pytest.Pytester,
) -> None:
    _recorded(pytester.path)
    pytester.makepyfile(test_store=(
        "def test_store(footprint_replay):\n"
        f"    result = footprint_replay.assert_replays('last', {DESK!r}, "
        f"store={str(pytester.path / 'store')!r})\n"
        "    assert result.identical and result.decisions > 100\n"))
    _run(pytester, "test_store.py").assert_outcomes(passed=1)


def test_given_a_folder_that_is_no_recording_when_replayed_then_one_line_names_the_fix(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_bad=(
        "from pathlib import Path\n\n"
        "def test_bad(footprint_replay):\n"
        f"    footprint_replay.assert_replays(Path('nowhere'), {DESK!r})\n"))
    result = _run(pytester, "test_bad.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*'nowhere' is not a recording folder; write one with "
                                 "`footprint snapshot RUN --agent M:F -o DIR`"])
