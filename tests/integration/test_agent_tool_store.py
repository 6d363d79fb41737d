"""A host-assigned tool status and a timeout reach the store's ``tool_calls`` view."""

from __future__ import annotations

import threading
from pathlib import Path

from footprint.agent import Agent, StepClock, ToolReturn, tool
from footprint.providers import ScriptedModel, call
from recorder import ParquetSink, Recorder, open_store

GATE = threading.Event()


def stuck() -> str:
    """Wait for a reply that never comes (bounded)."""
    GATE.wait(5)
    return "late"


def refuse() -> ToolReturn:
    """Refuse politely."""
    return ToolReturn(content="no", status="denied")


def test_given_a_timed_out_and_a_refusing_tool_when_stored_then_tool_calls_shows_who_said_so(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    try:
        with Recorder([ParquetSink(root)]) as rec:
            Agent(provider=ScriptedModel([[call("stuck"), call("refuse")], "ok"]), model="m",
                  tools=[tool(stuck, timeout_s=0.2), refuse], sink=rec,
                  clock=StepClock()).run_sync("go")
    finally:
        GATE.set()
    rows = open_store(root).rows(
        "SELECT tool_name, status, status_by, error, timeout_s FROM tool_calls "
        "ORDER BY start_seq")
    assert rows == [("stuck", "failure", "host", True, 0.2),
                    ("refuse", "denied", "tool", False, None)]
