"""Conversations through the intake's index: a receiver restarted between turns maps each
later turn as one intake would, reading the store once (not once per conversation), and the
index stays bounded."""

from __future__ import annotations

import contextlib
import os
import pty
import subprocess
import sys
from pathlib import Path

from otlp_build import conversation_turn, to_json, trace_request

from footprint.events import ContextInjected, RunStart
from recorder import open_store
from recorder.ingest import Intake
from recorder.ingest._conversations import Conversations
from recorder.ingest._mapper import Conversation

CONVERSATIONS, TURNS = 12, 4
ROOT = Path(__file__).resolve().parents[2]


def _take(intake: Intake, turns: range) -> None:
    spans = [s for c in range(CONVERSATIONS) for t in turns for s in conversation_turn(c, t)]
    intake.take(trace_request(spans).SerializeToString(), signal="traces", fmt="pb")


def _named(store: Path) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Per question: the turn its run is, and the origin of every message it sent."""
    out = {}
    with open_store(store) as s:
        for (run_id,) in s.rows("SELECT run_id FROM runs"):
            events = s.events(run_id)
            start = next(e for e in events if isinstance(e, RunStart))
            out[start.user_message] = (start.turn, tuple(
                e.injection_id or "" for e in events
                if isinstance(e, ContextInjected) and e.slot == "messages"))
    return out


def test_given_a_receiver_restarted_between_turns_when_mapped_then_turns_match_one_intake_and_the_store_is_read_once(  # noqa: E501
        tmp_path: Path) -> None:
    with Intake(tmp_path / "one") as intake:
        _take(intake, range(TURNS))
    with Intake(tmp_path / "two") as intake:
        _take(intake, range(2))
    with Intake(tmp_path / "two") as restarted:
        _take(restarted, range(2, TURNS))
    assert restarted.conversation_reads == 1
    one, two = _named(tmp_path / "one"), _named(tmp_path / "two")
    assert len(one) == CONVERSATIONS * TURNS
    assert two == one
    assert one["order C3-3?"][0] == 3 and "turn2:llm#2" in one["order C3-3?"][1]


def test_given_more_conversations_than_the_cap_when_used_then_the_least_recent_falls_out() -> None:
    index = Conversations(cap=2)
    for key in ("a", "b"):
        index.put(key, Conversation(turns=1))
    assert index.get("a") is not None  # "a" is now the most recent
    index.put("c", Conversation(turns=1))
    assert len(index) == 2 and index.get("b") is None and index.get("a") is not None


def test_given_a_terminal_when_files_are_ingested_then_a_bar_shows_spans_runs_and_rate(
        tmp_path: Path) -> None:
    lines = tmp_path / "talk.jsonl"
    lines.write_bytes(b"".join(to_json(trace_request(conversation_turn(c, t))) + b"\n"
                               for c in range(30) for t in range(TURNS)))
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "COLUMNS": "160"}
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "ingest", str(lines), "--store",
                             str(tmp_path / "store")], stdout=subprocess.PIPE, stderr=follower,
                            env=env, cwd=ROOT)
    os.close(follower)
    seen = bytearray()
    with contextlib.suppress(OSError):  # the pty reads EIO once the child has closed it
        while chunk := os.read(leader, 65536):
            seen += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0 and b"120 runs mapped" in out, out
    drawn = bytes(seen).decode("utf-8", "replace")
    assert "spans/s" in drawn and " runs, " in drawn and " spans, " in drawn, drawn[-500:]
