"""Stores for the TUI tests: the support desk recorded, and a synthetic long run."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

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
from lens.tui import LensApp
from recorder import ParquetSink, Recorder

BIG_RUN = "0190aaaa-0000-7000-8000-000000000100"
SIZE = (120, 40)
"""The terminal the lens tests run in (columns, rows)."""


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


# ── a long, realistic run: the desk's loop repeated, one turn per repetition ────────────


def _desk_template() -> tuple[list[Event], list[Event], Event]:
    """The desk run split into its prelude (iteration 0), its loop, and its ``run.end``."""
    from footprint.events import ListSink

    sink = ListSink()
    make_agent(sink=sink).answer()
    events: list[Event] = list(sink.events)  # type: ignore[arg-type]
    prelude = [e for e in events if e.iteration == 0 and e.type != "run.end"]
    loop = [e for e in events if e.iteration > 0 and e.type != "run.end"]
    return prelude, loop, events[-1]


def _renamed(e: Event, rep: int) -> dict[str, object]:
    """The call ids of repetition ``rep``: each turn's tool calls are its own."""
    import dataclasses

    from footprint.providers import ToolCall

    def rename(text: str) -> str:
        return text.replace("call_", f"call_{rep}_")

    out: dict[str, object] = {}
    for name in ("tool_call_id",):
        value = getattr(e, name, None)
        if isinstance(value, str):
            out[name] = rename(value)
    if isinstance(e, ToolStart | ToolEnd):
        out["step_id"] = rename(e.step_id or "")
    calls = getattr(e, "tool_calls", None)
    if calls:
        out["tool_calls"] = tuple(ToolCall(id=rename(c.id), name=c.name, arguments=c.arguments)
                                  for c in calls)
    ref = getattr(e, "request_ref", None)
    if isinstance(ref, str):
        out["request_ref"] = rename(ref)
    del dataclasses
    return out


def long_run_events(count: int) -> Iterator[Event]:
    """About ``count`` events of one run: the desk's loop repeated as turns 0, 1, 2, …"""
    import dataclasses

    prelude, loop, end = _desk_template()
    per_rep, base_seq = len(loop), len(prelude)
    reps = max(1, (count - base_seq - 1) // per_rep)
    iterations = max(e.iteration for e in loop)
    run_id, ts0 = BIG_RUN, 1_767_225_600_000_000_000
    seq = 0
    for e in prelude:
        yield dataclasses.replace(e, run_id=run_id, seq=seq, ts=ts0 + seq)  # type: ignore[misc]
        seq += 1
    for rep in range(reps):
        for e in loop:
            yield dataclasses.replace(  # type: ignore[misc]
                e, run_id=run_id, seq=seq, ts=ts0 + seq * 1000, turn=rep,
                iteration=rep * iterations + e.iteration, **_renamed(e, rep))
            seq += 1
    yield dataclasses.replace(end, run_id=run_id, seq=seq, ts=ts0 + seq * 1000,  # type: ignore[misc]
                              turn=reps - 1, iteration=reps * iterations,
                              iteration_count=reps * iterations)


def write_long_run(path: Path, count: int, *, chunk: int = 20_000) -> str:
    """A store at ``path`` holding one realistic run of about ``count`` events; its run id."""
    sink = ParquetSink(path)
    batch: list[Event] = []
    try:
        for e in long_run_events(count):
            batch.append(e)
            if len(batch) >= chunk:
                sink.export(batch)  # type: ignore[arg-type]
                batch = []
        if batch:
            sink.export(batch)  # type: ignore[arg-type]
        sink.force_flush(600.0)
    finally:
        sink.shutdown()
    return BIG_RUN


async def settle(pilot: Pilot[Any], seconds: float = 20.0, quiet_s: float = 0.2) -> None:
    """Wait until the lens has read what it asked for (no worker busy for ``quiet_s``, which
    outlasts its short timers) and repainted."""
    app = pilot.app
    started = last_busy = time.monotonic()
    while time.monotonic() - started < seconds:
        await pilot.pause()
        if any(not w.is_finished for w in app.workers):
            last_busy = time.monotonic()
        elif time.monotonic() - last_busy >= quiet_s:
            await pilot.pause()
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the lens was still reading after {seconds} s")


@contextlib.asynccontextmanager
async def lens_on(store: Path, run: str | None = "last", *, settled: bool = True,
                  **options: Any) -> AsyncIterator[Pilot[Any]]:
    """The lens opened on ``store`` (at ``run``; ``None`` for the runs list) under a Pilot,
    in a ``SIZE`` terminal, and settled first unless ``settled=False``."""
    app = LensApp(store, run=run, **options)
    async with app.run_test(size=SIZE) as pilot:
        if settled:
            await settle(pilot)
        yield pilot


def text_of(widget: Static) -> str:
    """The plain text a ``Static`` shows."""
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)
