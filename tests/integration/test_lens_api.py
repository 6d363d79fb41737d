"""The lens's public Python API: replay and diff on a store, a path or events; readable results."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

import lens
from footprint import ConfigError
from footprint.events import ListSink
from lens._examples.support_desk import PLANTED_FACT, make_agent
from recorder import ParquetSink, Recorder

DESK = "lens._examples.support_desk:make_agent"


def _record(store: Path, *variants: dict[str, object]) -> list[str]:
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        return [make_agent(sink=recorder, **kw).answer().run_id  # type: ignore[arg-type]
                for kw in variants or ({},)]
    finally:
        recorder.close()


def test_given_a_store_path_when_replayed_then_the_result_is_identical_and_reads_well(
    tmp_path: Path,
) -> None:
    (run_id,) = _record(tmp_path / "store")
    result = lens.replay(tmp_path / "store", run_id[:10], DESK)
    assert isinstance(result, lens.ReplayResult)
    assert result.identical and result.turns == 1 and result.decisions > 100
    assert str(result).startswith(f"replay of {run_id}: identical — {result.decisions} ")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.identical = False  # type: ignore[misc]


def test_given_events_and_a_changed_factory_when_replayed_then_the_divergence_is_typed() -> None:
    sink = ListSink()
    make_agent(sink=sink).answer()
    result = lens.replay(sink.events, "last", lambda: make_agent(without=(PLANTED_FACT,)))
    assert not result.identical
    assert result.divergence is not None and result.divergence.step == "engine#1"
    assert result.request_step == "llm#1"
    assert [p.part for p in result.request_diff] == ["system prompt"]
    assert f"- injection.declared: declared fact {PLANTED_FACT!r}" in str(result)


def test_given_two_runs_when_diffed_through_an_open_store_then_a_run_diff_comes_back(
    tmp_path: Path,
) -> None:
    a, b = _record(tmp_path / "store", {}, {"without": (PLANTED_FACT,), "seed": 2})
    with lens.open_store(tmp_path / "store") as store:
        result = lens.diff(store, a, b)
    assert isinstance(result, lens.RunDiff) and not result.equal
    text = str(result)
    assert text.startswith(f"diff A {a} · B {b}: ")
    assert "answer         - APPROVED" in text and "answer         + DECLINED" in text


def test_given_a_fresh_interpreter_when_help_is_asked_then_the_documented_api_shows() -> None:
    done = subprocess.run([sys.executable, "-c", "import lens; help(lens.replay)"],
                          capture_output=True, text=True, timeout=60, check=True,
                          env={"PAGER": "cat", "PATH": "/usr/bin:/bin"})
    assert "replay(store: 'StoreLike', run: 'str', agent: 'Any') -> 'ReplayResult'" in done.stdout
    assert "A follow-up turn is replayed with every earlier turn of its conversation." \
        in done.stdout
    assert sorted(lens.__all__) == ["ReplayResult", "RunDiff", "WhyReport", "assert_decisions",
                                    "assert_replays", "diff", "open_store", "replay", "why"]


def test_given_an_unknown_name_when_read_from_lens_then_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'lens' has no attribute 'replai'"):
        lens.replai  # type: ignore[attr-defined]  # noqa: B018


def test_given_something_that_is_no_store_when_replayed_then_config_error_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"store=42 is not a store; pass lens.open_store"):
        lens.replay(42, "last", DESK)
