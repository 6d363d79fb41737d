"""``footprint show RUN``: a readable timeline — cursor, refusals, injections, tools, answer."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    LLMEnd,
    LLMStart,
    RouteConflict,
    RunEnd,
    RunFailed,
    RunStart,
    SkillActivated,
    SkillEscalated,
    SkillRejected,
    ToolEffect,
    ToolEnd,
    ToolStart,
)
from lens._cmd_common import clip, open_from

__all__ = ["run", "timeline"]


def _cursor(e: ContextEvaluated) -> str | None:
    move = e.cursor_move
    if move is None:
        return None
    where = f"{move.from_skill or '∅'} → {move.to or '∅'}"
    why = f" witness {move.witness!r}" if move.witness else ""
    return f"cursor    {where} (by {move.by}){why}"


def _line(e: Event) -> str | None:
    if isinstance(e, RunStart):
        return f"user      {clip(e.user_message, 100)}"
    if isinstance(e, ContextEvaluated):
        return _cursor(e)
    if isinstance(e, ContextInjected):
        src = f"{e.source} {e.injection_id!r}" if e.injection_id else e.source
        if e.slot == "tools":
            src += f" {clip(e.content_summary.split(':', 1)[0], 30)}"
        by = f", admitted by seq {e.admitted_by}" if e.admitted_by is not None else ""
        return f"injected  [{e.slot}] {src} via {e.admitted_via}{by}"
    if isinstance(e, SkillActivated):
        return f"skill +   {e.skill_id} ({e.reason})"
    if isinstance(e, SkillRejected):
        allowed = ", ".join(e.allowed) or "none"
        return (f"REJECTED  {e.requested_id!r} from {e.current_skill_id or '∅'}: "
                f"{e.reason} (allowed: {allowed})")
    if isinstance(e, SkillEscalated):
        return (f"ESCALATED after {e.refusals} refusals: {e.from_provider}/{e.from_model} → "
                f"{e.to_provider}/{e.to_model or '(same model)'}")
    if isinstance(e, RouteConflict):
        return f"conflict  winner {e.winner.tool_name} → {e.winner.target}, {len(e.losers)} lost"
    if isinstance(e, LLMStart):
        return f"llm       {e.provider}/{e.model} ({e.messages_count} msgs, {e.tools_count} tools)"
    if isinstance(e, LLMEnd):
        calls = ", ".join(c.name for c in e.tool_calls) or "no tool calls"
        return (f"  reply   {clip(e.content, 70)!r} [{calls}; "
                f"{e.input_tokens}+{e.output_tokens} tokens, {e.stop_reason}]")
    if isinstance(e, ToolStart):
        return f"tool      {e.tool_name}({clip(dict(e.args), 60)}) #{e.tool_call_id}"
    if isinstance(e, ToolEnd):
        flag = " ERROR" if e.error else ""
        return f"  result  {clip(e.result, 80)!r}{flag}"
    if isinstance(e, ToolEffect):
        return f"effect    {e.kind} {e.outcome}" + (f": {e.reason}" if e.reason else "")
    if isinstance(e, RunFailed):
        return f"FAILED    {e.error_type} in {e.stage}: {clip(e.message, 80)}"
    return None


def timeline(events: Iterable[Event]) -> list[str]:
    """The run as lines, grouped under one header per iteration, ending with the answer."""
    lines: list[str] = []
    iteration = -1
    answer: str | None = None
    for event in events:
        if isinstance(event, RunEnd):
            answer = event.final_content
            continue
        text = _line(event)
        if text is None:
            continue
        if event.iteration != iteration and event.iteration > 0:
            iteration = event.iteration
            lines.append(f"── iteration {iteration} " + "─" * 40)
        lines.append(f"  {event.seq:>5}  {text}")
    lines.append(f"answer: {answer}" if answer is not None else "answer: (none — run did not end)")
    return lines


def run(args: argparse.Namespace) -> int:
    store = open_from(args)
    run_id = store.resolve_run(args.run)
    head = store.rows(
        "SELECT status, model, iterations, tokens, events, dropped, mirror_dropped "
        "FROM runs WHERE run_id = ?",
        [run_id],
    )[0]
    status, model, iterations, tokens, count, dropped, mirror = head
    print(f"run {run_id} · {status} · model {model or '?'} · {iterations} iterations · "
          f"{tokens} tokens · {count} events" + (f" · {dropped} dropped" if dropped else "")
          + (f" · {mirror} spans not exported" if mirror else ""))
    trace = store.rows(
        "SELECT any_value(trace_id) FROM events WHERE run_id = ? AND trace_id IS NOT NULL",
        [run_id],
    )
    if trace and trace[0][0]:
        print(f"trace {trace[0][0]} (OpenTelemetry: search your tracing backend for it)")
    for line in timeline(store.events(run_id)):
        print(line)
    return 0
