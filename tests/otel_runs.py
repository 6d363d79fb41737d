"""Hand-built event sequences in the documented order (spec/engine.md §6), for the OTel tests.

``scripted_run`` writes one run: run.configured, run.start, then per
iteration context.evaluated, context.injected…, (skill.activated),
iteration.start, llm.start, llm.end, route.decided, tool.start/tool.end per
call (interleaved when ``concurrent``), tool.effect, iteration.end; run.end.
Timestamps advance 1 ms per event from a fixed epoch. The texts hold
``SECRET`` so tests can prove no content leaves without opt-in.
"""

from __future__ import annotations

from typing import Any

from footprint.events import (
    ConditionEvidence,
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    EventBase,
    GuardRecord,
    IterationEnd,
    IterationStart,
    LLMEnd,
    LLMStart,
    RouteDecided,
    RunConfigured,
    RunEnd,
    RunStart,
    SkillActivated,
    ToolEffect,
    ToolEnd,
    ToolStart,
)
from footprint.providers import ToolCall

__all__ = ["SECRET", "T0", "scripted_run"]

SECRET = "SECRET-hunter2"
T0 = 1_767_225_600_000_000_000


class _Clock:
    def __init__(self, run_id: str, start: int) -> None:
        self.run_id, self.seq, self.ts = run_id, 0, start

    def env(self, iteration: int, step: str) -> dict[str, Any]:
        env = {"run_id": self.run_id, "seq": self.seq, "ts": self.ts, "iteration": iteration,
               "step_id": step}
        self.seq += 1
        self.ts += 1_000_000
        return env


def _context(c: _Clock, i: int) -> list[EventBase]:
    guard = GuardRecord(from_skill="triage", to="billing", tool_name="lookup", verdict=True,
                        conditions=(ConditionEvidence(key="risk", op="gte", value=3,
                                                      actual_summary="5", passed=True),))
    move = (CursorMove(by="entry", to="triage", witness=SECRET) if i == 1 else
            CursorMove(by="route", from_skill="triage", to="billing", guard=guard))
    evaluated = ContextEvaluated(**c.env(i, f"engine#{i}"), active_count=2, skipped_count=0,
                                 evaluated_total=3, active_ids=("steer", "triage"),
                                 cursor_move=move)
    out: list[EventBase] = [evaluated]
    for pos, (iid, slot) in enumerate((("steer", "system-prompt"), ("triage", "system-prompt"))):
        out.append(ContextInjected(
            **c.env(i, f"engine#{i}"), slot=slot, source="steering" if pos == 0 else "skill",
            content_hash=f"{pos:064x}", content_summary=f"summary {SECRET}",
            reason=f"described {SECRET}", admitted_via="always" if pos == 0 else "cursor",
            injection_id=iid, position=pos, raw_content=f"body {SECRET}",
            admitted_by=evaluated.seq))
    if i == 1:
        out.append(SkillActivated(**c.env(i, f"engine#{i}"), skill_id="triage", reason="entry",
                                  evidence_seq=evaluated.seq, evidence_step=f"engine#{i}"))
    return out


def _tools(c: _Clock, i: int, calls: list[ToolCall], concurrent: bool,
           failing: bool) -> list[EventBase]:
    starts = [ToolStart(**c.env(i, f"tool#{k.id}"), tool_name=k.name, tool_call_id=k.id,
                        args={"q": SECRET}, parallel_count=len(calls) if concurrent else None)
              for k in calls] if concurrent else []
    out: list[EventBase] = list(starts)
    order = list(reversed(calls)) if concurrent else calls
    for k in order:
        if not concurrent:
            out.append(ToolStart(**c.env(i, f"tool#{k.id}"), tool_name=k.name,
                                 tool_call_id=k.id, args={"q": SECRET}))
        bad = failing and k is calls[0]
        out.append(ToolEnd(**c.env(i, f"tool#{k.id}"), tool_call_id=k.id, tool_name=k.name,
                           result=f"result {SECRET}", status="failure" if bad else "success",
                           error=bad, duration_ms=1.0))
    out.append(ToolEffect(**c.env(i, f"engine#{i}"), kind="transition", outcome="accepted",
                          tool_name=calls[0].name, tool_call_id=calls[0].id,
                          target_skill_id="billing"))
    return out


def scripted_run(run_id: str = "run-otel-1", *, iterations: int = 2, tools: int = 1,
                 concurrent: bool = False, failing_tool: bool = False,
                 conversation_id: str | None = "conv-7", start_ns: int = T0) -> list[EventBase]:
    """One complete run; the last iteration answers without tool calls."""
    c = _Clock(run_id, start_ns)
    out: list[EventBase] = [
        RunConfigured(**c.env(0, "engine#0"), agent_name="support", model="m-large",
                      provider="scripted", max_iterations=10, injection_count=3),
        RunStart(**c.env(0, "engine#0"), user_message=f"hello {SECRET}",
                 conversation_id=conversation_id),
    ]
    for i in range(1, iterations + 1):
        last = i == iterations
        out.extend(_context(c, i))
        out.append(IterationStart(**c.env(i, f"engine#{i}")))
        out.append(LLMStart(**c.env(i, f"llm#{i}"), provider="scripted", model="m-large",
                            request_hash=f"req{i}", messages_count=2, tools_count=1,
                            brain_via="skill" if i > 1 else None,
                            brain_skill_id="billing" if i > 1 else None))
        calls = [] if last else [ToolCall(id=f"c{i}_{k}", name=f"lookup{k}",
                                          arguments={"q": SECRET}) for k in range(tools)]
        out.append(LLMEnd(**c.env(i, f"llm#{i}"), content=f"reply {SECRET}",
                          response_hash=f"resp{i}", tool_calls=tuple(calls), input_tokens=10,
                          output_tokens=5, cache_read_tokens=4,
                          stop_reason="end_turn" if last else "tool_use", model="m-large-001"))
        out.append(RouteDecided(**c.env(i, f"engine#{i}"),
                                chosen="final" if last else "tool-calls",
                                rationale=f"because {SECRET}"))
        if calls:
            out.extend(_tools(c, i, calls, concurrent, failing_tool))
        out.append(IterationEnd(**c.env(i, f"engine#{i}"), tool_call_count=len(calls)))
    out.append(RunEnd(**c.env(iterations, "engine#end"), final_content=f"answer {SECRET}",
                      total_input_tokens=10 * iterations, total_output_tokens=5 * iterations,
                      iteration_count=iterations, duration_ms=12.0))
    return out
