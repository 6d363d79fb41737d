"""Decision-level snapshots: what a conversation decided, per turn and iteration, as JSON.

A snapshot keeps the decisions a reviewer cares about and nothing that
churns: per turn the person's message, how the turn was routed, and per
iteration the cursor moves, which injections landed in which slot (by id),
the model called, the tool calls with their status, then the answer. It is
compared as text, so a failure reads as a unified diff.

:func:`rerun_decisions` produces the current snapshot of a recorded
conversation: each turn runs on the agent with the recording as a cassette
that *falls back* to the agent's own models and tools from the first request
the recording does not hold — an unchanged agent is served entirely from the
recording (offline), a changed one runs live from where it changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from footprint._errors import RunError
from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    ListSink,
    LLMStart,
    RunEnd,
    RunFailed,
    RunStart,
    StepAdvanced,
    StepSkipped,
    ToolEnd,
    ToolStart,
    TurnRouted,
)
from lens.playback._cassette import LiveModels, ReplayModel, ReplayTools
from lens.playback._conversation import RecordedTurn

__all__ = ["decisions_json", "rerun_decisions", "turn_decisions"]


def _cursor(e: ContextEvaluated) -> str | None:
    m = e.cursor_move
    if m is None:
        return None
    guard = ""
    if m.guard is not None:
        guard = f" (guard {'passed' if m.guard.verdict else 'failed'})"
    return f"{m.from_skill or 'start'} -> {m.to or 'none'} by {m.by}{guard}"


def _args(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={args[k]!r}" for k in sorted(args))


def _fold(e: Event, it: dict[str, Any], starts: dict[str, ToolStart]) -> None:
    if isinstance(e, ContextEvaluated):
        move = _cursor(e)
        if move:
            it.setdefault("cursor", []).append(move)
    elif isinstance(e, ContextInjected):
        slots = it.setdefault("injected", {})
        slots.setdefault(str(e.slot), []).append(e.injection_id or e.source)
    elif isinstance(e, LLMStart):
        it["model"] = e.model
    elif isinstance(e, ToolStart):
        starts[e.tool_call_id] = e
    elif isinstance(e, ToolEnd):
        start = starts.get(e.tool_call_id)
        status = e.status or ("error" if e.error else "ok")
        it.setdefault("tool calls", []).append(
            f"{e.tool_name}({_args(start.args) if start else ''}) -> {status}")
    elif isinstance(e, StepAdvanced | StepSkipped):
        verb = "done" if isinstance(e, StepAdvanced) else "skipped"
        it.setdefault("steps", []).append(f"{e.skill_id} {e.step.index}/{e.total} {verb}")


def turn_decisions(events: Sequence[Event]) -> dict[str, Any]:
    """One turn's decisions as a JSON-ready dict (see the module docstring)."""
    out: dict[str, Any] = {}
    iterations: dict[int, dict[str, Any]] = {}
    starts: dict[str, ToolStart] = {}
    for e in events:
        if isinstance(e, RunStart):
            out["message"] = e.user_message
        elif isinstance(e, TurnRouted):
            picked = f" (decider picked {e.decider.picked})" \
                if e.decider is not None and e.decider.picked else ""
            out["routed"] = f"by {e.by} to {e.to or 'none'}{picked}"
        elif isinstance(e, RunEnd):
            out["answer"] = e.final_content
        elif isinstance(e, RunFailed):
            out["failed"] = f"{e.error_type}: {e.message}"
        elif e.iteration > 0:
            _fold(e, iterations.setdefault(e.iteration, {}), starts)
    for it in iterations.values():  # one line per slot: the ids in landing order
        if "injected" in it:
            it["injected"] = {slot: ", ".join(ids) for slot, ids in it["injected"].items()}
    out["iterations"] = [{"iteration": i, **it} for i, it in sorted(iterations.items())]
    if "answer" in out:  # the answer reads last
        out["answer"] = out.pop("answer")
    return out


def decisions_json(turns: Sequence[Sequence[Event]]) -> str:
    """The conversation's decision snapshot as stable, readable JSON text."""
    body = {"turns": [turn_decisions(t) for t in turns]}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def rerun_decisions(turns: Sequence[RecordedTurn], agent: Any) -> str:
    """Run every recorded turn's message on ``agent`` (cassette first, then live); its snapshot.

    A turn that fails is kept with its ``failed`` line and ends the run.
    """
    checkpoint: dict[str, Any] | None = None
    made: list[list[Event]] = []
    for turn in turns:
        sink = ListSink()
        model = ReplayModel(turn.events, fallback=LiveModels(agent))
        tools = ReplayTools(turn.events, live=True)
        runner = agent.variant(model_source=model, tool_source=tools, sink=sink)
        try:
            runner.run_sync(turn.user_message, continue_from=checkpoint)
            checkpoint = runner.checkpoint()
        except RunError:
            checkpoint = None
        made.append(list(sink.events))  # type: ignore[arg-type]
        if checkpoint is None:
            break
    return decisions_json(made)
