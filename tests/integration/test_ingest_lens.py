"""Runs taken in from foreign traces read like native ones (issue 31, item 6): ``diff`` of
two identical ingested runs is clean, each document shows once in what the model saw, and
``export-otlp`` then ``receive`` keeps the tool definitions and the documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from foreign_agents import STALE, run_langchain_rag
from foreign_layouts import LAYOUTS
from ingest_support import record
from otlp_build import agent_trace, trace_request
from planted_support import ROOT

from footprint.events import ContextInjected, Event, LLMStart
from lens.tui._model import build_run
from recorder import open_store
from recorder.ingest import Intake, Receiver


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_given_two_identical_traces_when_ingested_and_diffed_then_they_are_equal_exit_0(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    spans = agent_trace(1) + agent_trace(2, t0=1_780_000_100 * 10**9)  # only ids and times
    with Intake(store, keep_raw=False) as intake:
        intake.take(trace_request(spans).SerializeToString(), signal="traces", fmt="pb")
    with open_store(store) as s:
        a, b = (r[0] for r in s.rows("SELECT run_id FROM runs ORDER BY start_ns"))
    done = _cli("diff", a, b, "--store", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the same decisions" in done.stdout and "foreign_trace_id" not in done.stdout


def test_given_two_different_ingested_runs_when_diffed_then_they_differ_exit_1(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    spans = agent_trace(1) + agent_trace(2, calls=3, t0=1_780_000_100 * 10**9)
    with Intake(store, keep_raw=False) as intake:
        intake.take(trace_request(spans).SerializeToString(), signal="traces", fmt="pb")
    with open_store(store) as s:
        a, b = (r[0] for r in s.rows("SELECT run_id FROM runs ORDER BY start_ns"))
    done = _cli("diff", a, b, "--store", str(store))
    assert done.returncode == 1, done.stdout + done.stderr
    assert " 0 changes" not in done.stdout


@pytest.mark.parametrize("layout", ["langchain rag", "langchain user-context",
                                    "langchain cited"])
def test_given_retrieved_documents_when_shown_then_each_is_shown_once_per_call(
        layout: str, tmp_path: Path) -> None:
    mapped = record({**LAYOUTS, "langchain rag": run_langchain_rag}[layout], tmp_path / "store")
    view = build_run(mapped.runs[0][0].run_id, mapped.runs[0])
    assert view.iterations
    for it in view.iterations:
        shown = [b.text for slot in ("system-prompt", "messages") for b in it.slot(slot)]
        assert sum(t.count(STALE) for t in shown) == 1, shown
        holds = [v for slot in ("system-prompt", "messages") for b in it.slot(slot)
                 for k, v in b.details if k == "holds"]
        docs = [b for b in it.slot("system-prompt") + it.slot("messages") if b.flavor == "rag"]
        assert any("doc:memo-fin-2019-07" in h for h in holds) or any(
            STALE in b.text for b in docs)


def _kept(events: list[Event]) -> list[tuple[object, ...]]:
    """What a round trip must keep: each call's tools and every piece it was given."""
    tools = [(e.iteration, tuple(t["name"] for t in json.loads(e.request_ref or "{}")["tools"]))
             for e in events if isinstance(e, LLMStart)]
    pieces = [(e.iteration, e.slot, e.source, e.injection_id, e.raw_content) for e in events
              if isinstance(e, ContextInjected)]
    return [*tools, *pieces]


@pytest.mark.parametrize("layout", ["langchain rag", "langchain cited"])
def test_given_an_ingested_run_when_exported_and_taken_in_again_then_tools_and_documents_stay(
        layout: str, tmp_path: Path) -> None:
    mapped = record({**LAYOUTS, "langchain rag": run_langchain_rag}[layout], tmp_path / "a")
    receiver = Receiver(Intake(tmp_path / "b"), port=0).start()
    try:
        done = _cli("export-otlp", "last", "--store", str(tmp_path / "a"), "--content",
                    "--endpoint", receiver.endpoint)
    finally:
        receiver.stop()
    assert done.returncode == 0, done.stderr
    with open_store(tmp_path / "b") as s:
        again = s.events(s.resolve_run("last"))
    assert next(t for t in _kept(mapped.runs[0]) if len(t) == 2)[1] == ("lookup_order",)
    assert _kept(again) == _kept(mapped.runs[0])


@pytest.mark.parametrize(("args", "said"), [
    (["--model", "m"], "--model 'm' names the model to re-send to"),
    (["--serve", "--provider", "tests/resend_providers.py:refund_desk"],
     "are not passed on to the browser sessions of --serve")])
def test_given_re_send_options_the_lens_cannot_use_when_it_starts_then_it_says_so_exit_2(
        args: list[str], said: str, tmp_path: Path) -> None:
    done = _cli("lens", *args, "--store", str(tmp_path / "store"))
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / "store").exists()
