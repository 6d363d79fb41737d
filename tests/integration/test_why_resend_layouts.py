"""``why --resend`` names the planted part in every common layout (issue 31, item 3).

Each agent of ``tests/foreign_layouts.py`` is a real pydantic-ai, OpenAI Agents SDK or
LangChain agent, run offline and received over OTLP/HTTP on 127.0.0.1; the stale passage is
one part among innocent ones (a ``system_prompt`` part, a paragraph of a handoff target's
instructions, a document in the user message, a cited or wrapped document in the system
message), or a tool result (an OpenAI Agents SDK policy tool returning the stale passage
beside a fresh order lookup). The command a user types must confirm that part, alone, as the
root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from foreign_agents import MEMO_ID, STALE
from foreign_layouts import INNOCENT, LAYOUTS, run_openai_agents_stale_tool_result
from ingest_support import record
from planted_support import ROOT

from footprint.events import ContextInjected, LLMStart

DOCUMENTS = {"langchain user-context", "langchain cited", "langchain tagged", "langchain late"}


def _why(store: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "lens.cli", "why", "last", "--store", str(store), "--resend",
         "--provider", "tests/resend_providers.py:refund_desk", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-600:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_given_a_stale_part_in_a_common_layout_when_resent_then_that_part_alone_is_the_root(
        layout: str, tmp_path: Path) -> None:
    mapped = record(LAYOUTS[layout], tmp_path / "store")
    events = mapped.runs[0]
    last = max(e.iteration for e in events if isinstance(e, LLMStart))
    pieces = [e for e in events if isinstance(e, ContextInjected) and e.iteration == last]
    stale = [e for e in pieces if STALE in (e.raw_content or "") and e.source in ("base", "rag")]
    assert [len(e.raw_content or "") < len(STALE) + 40 for e in stale] == [True], stale
    report = _why(tmp_path / "store")
    suspects = report["suspects"]
    assert isinstance(suspects, list)
    roots = [s for s in suspects if s["role"] == "root"]
    assert len(roots) == 1 and STALE[:40] in roots[0]["excerpt"], roots
    assert not any(text[:30] in roots[0]["excerpt"] for text in INNOCENT)
    assert roots[0]["changes"][0] == "APPROVED → DECLINED"
    if layout in DOCUMENTS:
        assert roots[0]["id"] == f"doc:{MEMO_ID}"
    confirmed = [s for s in suspects if s["verdict"] == "confirmed" and s is not roots[0]]
    assert all(s["effect"] == "lost" and s["kind"] == "tool_result" for s in confirmed)
    assert report["root_causes"] == [roots[0]["label"]]
    assert not [f for f in report["flags"] if str(f).startswith("unsplit:")]


def test_given_pydantic_ai_system_prompt_parts_when_received_then_each_part_is_a_piece(
        tmp_path: Path) -> None:
    mapped = record(LAYOUTS["pydantic-ai system_prompt parts"], tmp_path / "store")
    sent = mapped.truth.calls[-1].system
    instructions, parts = sent[0].split("\n\n"), sent[1:]
    last = max(e.iteration for e in mapped.runs[0] if isinstance(e, LLMStart))
    got = [e.raw_content for e in mapped.runs[0] if isinstance(e, ContextInjected)
           and e.iteration == last and e.slot == "system-prompt"]
    assert got == [*instructions, *parts] and len(got) == 5


def test_given_documents_retrieved_before_a_call_that_does_not_hold_them_then_they_wait(
        tmp_path: Path) -> None:
    mapped = record(LAYOUTS["langchain late"], tmp_path / "store")
    docs = [(e.iteration, e.injection_id) for e in mapped.runs[0]
            if isinstance(e, ContextInjected) and e.source == "rag"]
    assert docs == [(2, f"doc:{MEMO_ID}"), (2, "doc:ship-note")]


def test_given_an_openai_agents_stale_tool_result_when_resent_then_that_result_is_the_root(
        tmp_path: Path) -> None:
    mapped = record(run_openai_agents_stale_tool_result, tmp_path / "store")
    events = mapped.runs[0]
    last = max(e.iteration for e in events if isinstance(e, LLMStart))
    results = [e for e in events if isinstance(e, ContextInjected) and e.iteration == last
               and e.source == "tool-result"]
    assert [STALE in (e.raw_content or "") for e in results] == [False, True], results
    report = _why(tmp_path / "store")
    roots = [s for s in report["suspects"] if s["role"] == "root"]
    assert len(roots) == 1 and roots[0]["kind"] == "tool_result", roots
    assert STALE[:40] in roots[0]["excerpt"] and "A-1047" not in roots[0]["excerpt"]
    assert roots[0]["changes"][0] == "APPROVED → DECLINED"
    confirmed = [s for s in report["suspects"] if s["verdict"] == "confirmed"
                 and s is not roots[0]]
    assert all(s["effect"] == "lost" and s["kind"] == "tool_result" for s in confirmed)
    assert not any(text[:30] in s["excerpt"] for s in confirmed for text in INNOCENT)
    assert report["root_causes"] == [roots[0]["label"]]
