"""A final reply that is no plain answer — empty, a refusal, cut at its length or by the
content filter — is flagged in ``show``, ``runs``, the lens header and ``why`` (issue 32).

Each run is an ``OpenAIChat`` agent against a scripted OpenAI-compatible server on
127.0.0.1 (tests/fake_openai.py) that answers in that way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from planted_support import ROOT

from footprint import Agent
from footprint.providers import OpenAIChat
from lens.tui._base import header_text
from lens.tui._state import LensState
from recorder import ParquetSink, Recorder

CASES = {
    "empty": {"content": ""},
    "refused": {"content": None, "refusal": "I can't help with refunds."},
    "length": {"content": "Your refund of", "finish_reason": "length"},
    "filtered": {"content": "", "finish_reason": "content_filter"},
}


def _footprint(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _record(store: Path, reply: dict[str, Any]) -> str:
    server = FakeOpenAI([reply])
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        agent = Agent(provider=OpenAIChat("gpt-fake", base_url=server.base_url),
                      model="gpt-fake", sink=recorder)
        return agent.run_sync("Can I get a refund?").run_id
    finally:
        recorder.close()
        server.close()


@pytest.mark.parametrize("flag", sorted(CASES))
def test_given_a_final_reply_that_is_no_answer_when_read_then_every_reader_flags_it(
        flag: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    run_id = _record(store, CASES[flag])
    shown = _footprint("show", run_id, "--store", str(store))
    listed = _footprint("runs", "--store", str(store))
    why = _footprint("why", "last", "--store", str(store))
    assert shown.returncode == listed.returncode == why.returncode == 0, why.stderr
    assert f"  ⚠ {flag}: llm#1: " in shown.stdout
    head, _, row = listed.stdout.splitlines()[:3]
    assert head.split()[-1] == "flag" and row.split()[-1] == flag
    assert f"⚠ {flag}: llm#1: " in why.stdout
    state = LensState(store, run_id)
    assert f"⚠ {flag}: llm#1: " in header_text(state, "timeline").plain


def test_given_a_plain_answer_when_listed_then_no_flag_column_is_shown(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _record(store, {"content": "Yes: within 30 days."})
    listed = _footprint("runs", "--store", str(store))
    shown = _footprint("show", "last", "--store", str(store))
    assert "flag" not in listed.stdout.splitlines()[0] and "⚠" not in shown.stdout
