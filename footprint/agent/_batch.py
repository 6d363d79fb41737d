"""One batch of tool calls: run them, gate the skill picks, record the results.

Plain tools of a batch run concurrently; the agent's own skill tools
(``read_skill``, ``list_skills``, ``skip_step``) are judged in call order,
because the gate's answer for one pick can depend on an earlier one. Every
result is recorded in call order, and a bad call goes back to the model as
a teaching error, never as an exception.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from footprint.agent._compose import Composition, OfferedTool
from footprint.agent._emitter import RunEmitter
from footprint.agent._engine import Frame
from footprint.agent._invoke import ToolTimedOut, invoke
from footprint.agent._results import effects_of, read_result
from footprint.agent._setup import AgentSetup
from footprint.agent._sources import ServedTool
from footprint.agent._state import RunState
from footprint.agent._tools import validate_args
from footprint.agent._wire import json_safe
from footprint.graph import PickVerdict, ToolEffect, check_pick
from footprint.graph._steps import SkipOutcome, StepAdvance, advance, skip_step
from footprint.injection import ToolStatus
from footprint.providers import ToolCall
from footprint.providers._arguments import ARGUMENTS_ERROR_KEY, raw_arguments_of

__all__ = ["CallOutcome", "execute_batch"]

_UNCLEAN: frozenset[str] = frozenset({"failure", "denied", "invalid"})


@dataclass(slots=True, kw_only=True)
class CallOutcome:
    """What one call did, before it is recorded."""

    call: ToolCall
    text: str = ""
    status: ToolStatus | None = None
    status_by: Literal["tool", "host"] | None = None
    timeout_s: float | None = None
    error: bool = False
    duration_ms: float = 0.0
    effects: list[ToolEffect] = field(default_factory=list)
    pick: PickVerdict | None = None
    skip: SkipOutcome | None = None
    advanced: StepAdvance | None = None
    routed: str | None = None

    @property
    def route_text(self) -> str:
        """What routes, guards and on-tool-return triggers read: the tool's own result,
        without the engine's step note (which would make a JSON result unreadable)."""
        return self.text if self.routed is None else self.routed

    @property
    def declared_status(self) -> ToolStatus | None:
        """The status the tool itself declared; host-assigned ones never route."""
        return self.status if self.status_by == "tool" else None

    @property
    def ran(self) -> bool:
        """False when the host refused the call before running it (no such tool, bad args)."""
        return not (self.error and self.status == "invalid")

    @property
    def clean(self) -> bool:
        accepted = self.pick is None or self.pick.accepted
        return accepted and not self.error and self.status not in _UNCLEAN


def _teach(out: CallOutcome, text: str, status: ToolStatus = "invalid") -> CallOutcome:
    """A host-assigned outcome: the call was refused, crashed or timed out."""
    out.text, out.status, out.error, out.status_by = text, status, True, "host"
    return out


def _check_call(call: ToolCall, offered: OfferedTool | None,
                comp: Composition) -> str | None:
    """A teaching text when the call cannot run as asked, else ``None``."""
    if offered is None:
        names = ", ".join(t.spec.name for t in comp.tools) or "none"
        return f"There is no tool named {call.name!r}. Available tools: {names}."
    raw = raw_arguments_of(call)
    if raw is not None:
        why = call.arguments.get(ARGUMENTS_ERROR_KEY, "not a JSON object")
        return (f"The arguments for {call.name} could not be read ({why}): {raw!r}. "
                "Call it again with a JSON object that matches its schema.")
    problems = validate_args(offered.spec.input_schema, call.arguments)
    if problems:
        return (f"Invalid arguments for {call.name}: " + "; ".join(problems)
                + ". Fix them and call the tool again.")
    return None


def _absorb(out: CallOutcome, value: Any) -> None:
    """Read a tool's value: data whole, or the exact effects envelope (``_results``)."""
    try:
        read = read_result(value, out.call)
    except Exception as exc:  # RecursionError, a broken __str__: reported, never raised
        _teach(out, f"{out.call.name} returned a result that cannot be read as text: "
                    f"{type(exc).__name__}: {exc}", "failure")
        return
    out.text, out.status, out.effects = read.text, read.status, read.effects
    out.status_by = "tool" if read.status is not None else None


def _serve(out: CallOutcome, served: ServedTool) -> None:
    """Take a served result (replay) in place of running the tool."""
    out.text, out.status, out.error = served.text, served.status, served.error
    out.status_by = "host" if served.error else ("tool" if served.status else None)
    out.effects = effects_of(list(served.effects), out.call)


async def _run_plain(setup: AgentSetup, state: RunState, offered: OfferedTool,
                     out: CallOutcome, threaded: bool) -> None:
    """Run one plain tool: on one of the run's workers when it is timed (so it can be
    abandoned) or the batch runs several at once, else inline on the loop."""
    assert offered.tool is not None
    served = setup.tool_source.serve(out.call) if setup.tool_source is not None else None
    if served is not None:
        _serve(out, served)
        return
    limit = offered.tool.timeout_s if offered.tool.timeout_s is not None else setup.tool_timeout_s
    workers = state.workers if threaded or limit is not None else None
    try:
        value = await invoke(offered.tool.execute, dict(out.call.arguments), timeout_s=limit,
                             workers=workers)
    except ToolTimedOut as late:
        _teach(out, f"{out.call.name} failed: it {late}; the run went on without its "
                    "result. Try again later or another way.", "failure")
        out.timeout_s = late.timeout_s
        return
    except Exception as exc:  # a failing tool teaches the model; it never breaks the run
        _teach(out, f"{out.call.name} failed: {type(exc).__name__}: {exc}", "failure")
        return
    _absorb(out, value)


def _read_skill(setup: AgentSetup, state: RunState, frame: Frame, offered: OfferedTool,
                out: CallOutcome) -> None:
    requested = out.call.arguments.get("id")
    assert offered.descriptor is not None
    if setup.graph is not None and isinstance(requested, str) and requested:
        verdict = check_pick(setup.graph, requested, frame.ctx, posture=setup.posture,
                             hidden=setup.hidden_skills)
        out.pick = verdict
        if not verdict.accepted:
            out.text, out.error = verdict.text or "refused", False
            return
        if verdict.hop:
            state.pending_pick = requested
    if isinstance(requested, str) and requested and requested not in state.activated:
        state.activated.append(requested)
    out.text = offered.descriptor.execute(dict(out.call.arguments))


def _engine_tool(setup: AgentSetup, state: RunState, frame: Frame, offered: OfferedTool,
                 out: CallOutcome) -> None:
    assert offered.descriptor is not None
    if offered.kind == "read_skill":
        _read_skill(setup, state, frame, offered, out)
    elif offered.kind == "skip_step":
        outcome = skip_step(setup.plans, state.pointer, out.call.arguments.get("reason"))
        out.skip, out.text = outcome, outcome.text
        if outcome.kind == "skipped":
            state.pointer = outcome.pointer
    else:
        out.text = offered.descriptor.execute(dict(out.call.arguments))


async def execute_batch(setup: AgentSetup, state: RunState, frame: Frame, comp: Composition,
                        calls: tuple[ToolCall, ...], em: RunEmitter) -> list[CallOutcome]:
    """Run every call of the batch; plain tools concurrently, skill tools in order."""
    clock = em.clock
    outs = [CallOutcome(call=c) for c in calls]
    pending: list[Any] = []
    threaded = sum(1 for c in calls if (o := comp.tool(c.name)) and o.kind in
                   ("baseline", "skill")) > 1
    for out in outs:
        offered = comp.tool(out.call.name)
        problem = _check_call(out.call, offered, comp)
        t0 = clock.monotonic_ns()
        if problem is not None:
            _teach(out, problem)
        elif offered is not None and offered.descriptor is not None:
            _engine_tool(setup, state, frame, offered, out)
        elif offered is not None:
            pending.append(_timed(_run_plain(setup, state, offered, out, threaded), out, clock))
            continue
        out.duration_ms = (clock.monotonic_ns() - t0) / 1e6
    if len(pending) == 1:
        await pending[0]  # a lone call needs no task of its own
    elif pending:
        await asyncio.gather(*pending)
    for out in outs:
        if not out.error and out.pick is None:
            out.advanced = advance(setup.plans, state.pointer, tool_name=out.call.name,
                                   clean=out.clean)
            if out.advanced is not None:
                state.pointer = out.advanced.pointer
                out.routed = out.text  # routes and guards judge the tool's own result
                out.text += out.advanced.result_suffix
    return outs


async def _timed(work: Any, out: CallOutcome, clock: Any) -> None:
    t0 = clock.monotonic_ns()
    await work
    out.duration_ms = (clock.monotonic_ns() - t0) / 1e6


def args_of(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as JSON data for ``tool.start``."""
    safe = json_safe(call.arguments)
    return safe if isinstance(safe, dict) else {}
