"""`footprint replay`: a recorded run re-executed offline from its store, decision by decision."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.cli import _replay as _cmd_replay
from recorder import ParquetSink, Recorder

DESK = "lens._examples.support_desk:make_agent"


def _record(store: Path, **kw: object) -> str:
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        result = make_agent(sink=recorder, **kw).answer()  # type: ignore[arg-type]
    finally:
        recorder.close()
    return result.run_id


def _replay(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    _cmd_replay.add_parser(parser.add_subparsers(dest="command"))
    return _cmd_replay.run(parser.parse_args(["replay", *argv]))


def _without_fact_factory(tmp_path: Path) -> str:
    path = tmp_path / "desk_without_fact.py"
    path.write_text(
        "from lens._examples.support_desk import make_agent\n\n"
        "def make(sink=None):\n"
        f"    return make_agent(sink=sink, without=({PLANTED_FACT!r},))\n",
        encoding="utf-8")
    return f"{path}:make"


def test_given_a_recorded_support_desk_run_when_replayed_then_every_decision_is_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    run_id = _record(store)
    code = _replay(run_id[:12], "--agent", DESK, "--store", str(store))
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"replay of {run_id}: identical" in out
    assert "answer: APPROVED" in out


def test_given_the_example_file_path_when_replayed_then_it_loads_the_factory_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    _record(store)
    desk_file = Path(__file__).resolve().parents[2] / "examples" / "support_desk.py"
    assert _replay("last", "--agent", f"{desk_file}:make_agent", "--store", str(store)) == 0
    assert "identical" in capsys.readouterr().out


def test_given_the_planted_fact_removed_when_replayed_then_it_stops_at_the_first_divergence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    _record(store)
    code = _replay("last", "--agent", _without_fact_factory(tmp_path), "--store", str(store))
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"- injection.declared: declared fact {PLANTED_FACT!r}" in out
    assert "~ run.configured: injection_count: expected 11, got 10" in out
    first = out[out.index("first divergent decision"):]
    assert first.startswith("first divergent decision: seq 14 recorded / 13 replayed · "
                            "engine#1 · iteration 1")
    assert f'active_ids: -"{PLANTED_FACT}"' in first
    assert "model request at llm#1 is not in the recording; it differs in:" in out
    assert "system prompt: first differs at character" in out
    assert "recorded: …" in out and "Refund window: 60 days" in out
    assert "stopped: model call llm#1" in out
    assert "answer replayed" not in out


def test_given_a_run_that_is_not_in_the_store_when_replayed_then_it_exits_2_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    _record(store)
    assert _replay("nope", "--agent", DESK, "--store", str(store)) == 2
    err = capsys.readouterr().err
    assert "no run 'nope'" in err and "`footprint runs`" in err


@pytest.mark.parametrize(("agent", "expected"), [
    ("lens._examples.support_desk", "is not MODULE:ATTR"),
    ("lens._examples.support_desk:make_agnt", "did you mean 'make_agent'"),
    ("lens._examples.no_such_module:make", "cannot be imported"),
    ("missing/desk.py:make", "does not exist"),
])
def test_given_a_bad_agent_reference_when_replayed_then_it_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, expected: str,
) -> None:
    store = tmp_path / "store"
    _record(store)
    assert _replay("last", "--agent", agent, "--store", str(store)) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1
