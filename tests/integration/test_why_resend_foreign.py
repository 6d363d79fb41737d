"""``why --resend`` on runs taken in from other frameworks' traces (issue 23, must show).

Each framework's offline agent (``tests/foreign_agents.py``: pydantic-ai, the
OpenAI Agents SDK, LangChain) answers a refund question under a system
instruction holding a planted stale passage (``STALE``: a 60-day window); its
spans reach ``footprint receive`` on 127.0.0.1 through the stock OTLP
exporter. Then the command a user types re-sends the answer's recorded request
through a model that reads its request (``tests/resend_providers.py:refund_desk``)
and must name the instruction with the stale passage as the root, and no
innocent piece.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from foreign_agents import FRAMEWORKS, MEMO_ID, STALE, run_langchain_rag
from ingest_support import record
from planted_support import ROOT

from footprint.events import ContextInjected, LLMStart, RunSource
from lens.explain._report import schema


def _why(store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "lens.cli", "why", "last", "--store", str(store), "--resend",
         "--provider", "tests/resend_providers.py:refund_desk", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_given_a_foreign_agent_with_a_stale_passage_when_resent_then_the_passage_is_the_root(
        framework: str, tmp_path: Path) -> None:
    record(framework, tmp_path / "store")
    done = _why(tmp_path / "store")
    assert done.returncode == 0, done.stderr[-400:]
    report = json.loads(done.stdout)
    jsonschema.validate(report, schema())
    roots = [s for s in report["suspects"] if s["role"] == "root"]
    assert len(roots) == 1 and STALE[:40] in roots[0]["excerpt"]
    assert roots[0]["kind"] == "injection" and roots[0]["changes"][0] == "APPROVED → DECLINED"
    others = [s for s in report["suspects"] if s["verdict"] == "confirmed" and s is not roots[0]]
    assert all(s["effect"] == "lost" and s["kind"] == "tool_result" for s in others)
    assert report["root_causes"] == [roots[0]["label"]]
    traced = [s for s in report["suspects"] if s["kind"] in ("message", "tool_result")]
    assert traced and all(any(c.startswith("origin: ") for c in s["chain"]) for s in traced)
    assert any(f.startswith("foreign-run: recorded from a trace of ") for f in report["flags"])
    assert report["conclusion_text"].endswith("(request-level; later steps of the agent were "
                                              "not re-run)")


@pytest.mark.parametrize(("framework", "options"), [("pydantic-ai", {"include_content": False}),
                                                    ("langchain", {"hide_inputs": True})])
def test_given_content_capture_off_when_received_and_resent_then_nothing_is_invented(
        framework: str, options: dict[str, bool], tmp_path: Path) -> None:
    mapped = record(framework, tmp_path / "store", **options)
    for events in mapped.runs:
        source = next(e for e in events if isinstance(e, RunSource))
        calls = [e for e in events if isinstance(e, LLMStart)]
        assert source.fidelity == "usage-only", source
        assert len(source.flagged) == len(calls) and all(
            "no request content in the span (content capture off" in f for f in source.flagged)
        assert all(e.request_ref is None for e in calls)
        assert not [e for e in events if isinstance(e, ContextInjected) and e.slot == "messages"]
    done = _why(tmp_path / "store")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "plan:" not in done.stderr, done.stderr  # refused before any call is planned
    assert f"mapped from a trace of {source.framework} without the request's content" in \
        done.stderr and "turn the framework's content capture on" in done.stderr, done.stderr


def test_given_a_stale_retrieved_document_when_resent_then_the_first_line_names_the_document(
        tmp_path: Path) -> None:
    mapped = record(run_langchain_rag, tmp_path / "store")
    calls = [e for e in mapped.runs[0] if isinstance(e, LLMStart)]
    docs = {(e.iteration, e.injection_id) for e in mapped.runs[0]
            if isinstance(e, ContextInjected) and e.source == "rag"}
    assert docs == {(c.iteration, f"doc:{d}") for c in calls for d in (MEMO_ID, "ship-note")}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "lens.cli", "why", "last", "--store", str(tmp_path / "store"),
         "--resend", "--provider", "tests/resend_providers.py:refund_desk"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-400:]
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"CONFIRMED: removing document 'doc:{MEMO_ID}' changed the answer "
                            "of request llm#2 (APPROVED → DECLINED"), first
    report = _why(tmp_path / "store")
    roots = [s for s in json.loads(report.stdout)["suspects"] if s["role"] == "root"]
    assert [(s["kind"], s["id"]) for s in roots] == [("injection", f"doc:{MEMO_ID}")]
