"""Stores for the TUI tests: the support desk recorded, and a synthetic long run."""

from __future__ import annotations

from pathlib import Path

from footprint.agent import SeededIds
from footprint.events import (
    ContextInjected,
    Event,
    IterationStart,
    RunEnd,
    RunStart,
    SkillRejected,
    ToolEnd,
    ToolStart,
)
from lens._examples.support_desk import DEFAULT_SEED, make_agent
from recorder import ParquetSink, Recorder

BIG_RUN = "0190aaaa-0000-7000-8000-000000000100"


def _event(seq: int, iteration: int) -> Event:
    env = {"run_id": BIG_RUN, "seq": seq, "ts": 1_767_225_600_000_000_000 + seq,
           "iteration": iteration, "step_id": f"engine#{iteration}"}
    match seq % 5:
        case 0:
            return IterationStart(**env)  # type: ignore[arg-type]
        case 1:
            return ContextInjected(**env, slot="system-prompt", source="fact",  # type: ignore[arg-type]
                                   content_hash=f"{seq:064x}", content_summary="a fact",
                                   reason="always", admitted_via="always",
                                   injection_id=f"fact-{seq % 7}", admitted_by=seq - 1)
        case 2:
            return ToolStart(**env, tool_name="lookup", tool_call_id=f"c{seq}")  # type: ignore[arg-type]
        case 3:
            return ToolEnd(**env, tool_name="lookup", tool_call_id=f"c{seq - 1}",  # type: ignore[arg-type]
                           result="ok")
        case _:
            return SkillRejected(**env, requested_id="escalation",  # type: ignore[arg-type]
                                 reason="unreachable", allowed=("billing",))


def write_big_run(path: Path, count: int) -> str:
    """A store at ``path`` with one run of ``count`` events; its run id."""
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        recorder.emit(RunStart(run_id=BIG_RUN, seq=0, ts=1_767_225_600_000_000_000,
                               user_message="go"))
        for seq in range(1, count - 1):
            recorder.emit(_event(seq, 1 + seq // 5))
        recorder.emit(RunEnd(run_id=BIG_RUN, seq=count - 1, ts=1_767_225_700_000_000_000,
                             final_content="done"))
    finally:
        recorder.close()
    return BIG_RUN


def record_desk(path: Path) -> str:
    """Record the default support-desk conversation into a store at ``path``; its run id
    (seeded, so snapshots show the same id on every run)."""
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        result = make_agent(sink=recorder, ids=SeededIds(DEFAULT_SEED)).answer()
    finally:
        recorder.close()
    return result.run_id
