"""`footprint diff A B`: two recorded runs aligned on their decisions, not their timestamps."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint.events import ListSink
from footprint.events._envelope import EventBase
from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.cli import _diff as _cmd_diff
from lens.playback._diff import diff_runs, render_diff
from recorder import ParquetSink, Recorder


def _record(store: Path, **kw: object) -> str:
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        return make_agent(sink=recorder, **kw).answer().run_id  # type: ignore[arg-type]
    finally:
        recorder.close()


def _diff(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    _cmd_diff.add_parser(parser.add_subparsers(dest="command"))
    return _cmd_diff.run(parser.parse_args(["diff", *argv]))


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    store = tmp_path_factory.mktemp("diff") / "store"
    with_fact = _record(store, seed=1)
    without = _record(store, seed=2, without=(PLANTED_FACT,))
    return store, with_fact, without


def test_given_the_fact_removed_when_the_runs_are_diffed_then_the_fact_and_answer_show(
    two_runs: tuple[Path, str, str], capsys: pytest.CaptureFixture[str],
) -> None:
    store, a, b = two_runs
    assert _diff(a, b, "--store", str(store)) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1].startswith("first divergence: seq 14 (A) / 13 (B) · engine#1 · iteration 1")
    assert any(line.split() == ["run", "configuration", "-", "fact",
                                f"{PLANTED_FACT}#f8062b60"] for line in lines)
    assert any(line.split()[:5] == ["it", "1–6", "active", "-", PLANTED_FACT] for line in lines)
    assert any(line.split()[:3] == ["it", "1–6", "system-prompt"]
               and f"- {PLANTED_FACT}#" in line for line in lines)
    assert any("tool calls" in line and "- issue_refund(" in line and "amount=40" in line
               and "order_id='A-1047'" in line for line in lines)
    assert "  active_count: A 7, B 6" in lines
    assert any("tool calls" in line and "+ skip_step(" in line for line in lines)
    answer = [line for line in lines if line.split()[:2] == ["answer", "answer"]]
    assert answer[0].split()[2:4] == ["-", "APPROVED:"]
    assert answer[1].split()[2:4] == ["+", "DECLINED:"]


def test_given_two_runs_of_the_same_agent_when_diffed_then_they_are_equal_despite_other_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    a, b = _record(store, seed=1), _record(store, seed=2)
    assert a != b
    assert _diff(a, b, "--store", str(store)) == 0
    assert "the same decisions" in capsys.readouterr().out


def test_given_an_ambiguous_or_unknown_run_when_diffed_then_it_exits_2(
    two_runs: tuple[Path, str, str], capsys: pytest.CaptureFixture[str],
) -> None:
    store, a, _ = two_runs
    assert _diff(a, "zzz", "--store", str(store)) == 2
    assert "no run 'zzz'" in capsys.readouterr().err


def _events(**kw: object) -> list[EventBase]:
    sink = ListSink()
    make_agent(sink=sink, **kw).answer()  # type: ignore[arg-type]
    return sink.events


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_given_any_two_seeds_when_the_desk_runs_are_diffed_then_the_decisions_are_equal(
    s1: int, s2: int,
) -> None:
    result = diff_runs(_events(seed=s1), _events(seed=s2))  # type: ignore[arg-type]
    assert result.equal and result.first is None
    assert result.changes == ()


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["tone", "refund-policy", "shipping-times", "support-hours"]))
def test_given_any_removed_fact_when_diffed_then_the_configuration_names_it_first(
    removed: str,
) -> None:
    result = diff_runs(_events(), _events(without=(removed,)))  # type: ignore[arg-type]
    assert not result.equal
    first = result.changes[0]
    assert first.aspect == "configuration" and first.added == ()
    assert [x.split("#")[0].split()[-1] for x in first.removed] == [removed]
    assert render_diff(result)[0].endswith("(- only in A, + only in B)")
