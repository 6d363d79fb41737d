"""A recorded run reshaped for the timeline: iterations and what the model saw (pure).

Everything here is derived from the run's recorded events alone. System and
tool pieces are the ``context.injected`` records of the iteration; message
pieces are the recorded request's messages, each traced to the event that
produced it (``run.start`` for the person, ``llm.end`` for the model,
``tool.end`` for a tool result), plus any ``context.injected`` record that
delivered a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    LLMEnd,
    LLMStart,
    RunConfigured,
    RunEnd,
    RunFailed,
    RunStart,
    SkillRejected,
    ToolEnd,
    ToolStart,
)
from lens.tui._summary import summarize

__all__ = ["SLOTS", "SLOT_TITLES", "Block", "Iteration", "RunView", "build_iteration", "build_run",
           "origins_index", "request_messages"]

SLOTS: tuple[str, ...] = ("system-prompt", "messages", "tools")
SLOT_TITLES: Mapping[str, str] = {"system-prompt": "System", "messages": "Messages",
                                  "tools": "Tools"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """One labelled piece of one model call's input, with what the inspector shows."""

    slot: str
    label: str
    text: str
    flavor: str
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Iteration:
    """One loop iteration: the cursor move, tools, refusals, tokens, and the call's input."""

    number: int
    move: CursorMove | None = None
    tools: tuple[str, ...] = ()
    refusals: int = 0
    tokens: int = 0
    call: LLMStart | None = None
    blocks: Mapping[str, tuple[Block, ...]] = field(default_factory=dict)

    def slot(self, name: str) -> tuple[Block, ...]:
        return tuple(self.blocks.get(name, ()))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunView:
    """A run as the timeline shows it."""

    run_id: str
    status: str
    model: str
    answer: str | None
    iterations: tuple[Iteration, ...]
    events: tuple[Event, ...]


# ── blocks ─────────────────────────────────────────────────────────────────


def _admitting(e: ContextInjected, by_seq: Mapping[int, Event]) -> str:
    if e.admitted_by is None:
        return "(no admitting event recorded)"
    found = by_seq.get(e.admitted_by)
    return summarize(found, 120) if found is not None else f"seq {e.admitted_by} (not in store)"


def injected_block(e: ContextInjected, by_seq: Mapping[int, Event]) -> Block:
    """A ``context.injected`` record as a labelled block."""
    name = e.injection_id or e.source
    if e.slot == "tools":
        name = f"{e.content_summary.split(':', 1)[0]} ← {name}"
    by = f"admitted by seq {e.admitted_by}" if e.admitted_by is not None else "no admitting seq"
    label = f"{name} · {e.source} · {e.admitted_via} · {by}"
    details = [("landed", f"seq {e.seq} (context.injected, {e.step_id})"),
               ("injection", e.injection_id or "—"), ("flavor", e.source),
               ("slot", f"{e.slot} #{e.position}" + (f" as {e.as_role}" if e.as_role else "")),
               ("content hash", e.content_hash), ("reason", e.reason),
               ("admitted via", e.admitted_via), ("admitted by", _admitting(e, by_seq))]
    if e.retrieval_score is not None:
        details.append(("retrieval", f"score {e.retrieval_score:.3f} rank {e.rank_position} "
                                     f"threshold {e.threshold}"))
    text = e.raw_content if e.raw_content is not None else f"{e.content_summary} (redacted)"
    return Block(slot=e.slot, label=label, text=text, flavor=e.source, details=tuple(details))


def _message_text(message: Mapping[str, Any]) -> str:
    text = str(message.get("content") or "")
    calls = message.get("tool_calls") or []
    shown = [f"→ {c.get('name')}({json.dumps(c.get('arguments', {}), sort_keys=True)})"
             for c in calls if isinstance(c, Mapping)]
    return "\n".join([text, *shown]).strip() or "(empty)"


Origins = Mapping[tuple[str, str], Event]


def origins_index(events: Sequence[Event]) -> dict[tuple[str, str], Event]:
    """Where messages come from, first occurrence wins: tool results, model turns, the person."""
    index: dict[tuple[str, str], Event] = {}
    for e in events:
        if isinstance(e, ToolEnd):
            index.setdefault(("tool", e.tool_call_id), e)
        elif isinstance(e, LLMEnd):
            for c in e.tool_calls:
                index.setdefault(("call", c.id), e)
            index.setdefault(("content", e.content), e)
        elif isinstance(e, RunStart):
            index.setdefault(("user", e.user_message), e)
    return index


def _origin(message: Mapping[str, Any], origins: Origins) -> Event | None:
    role = message.get("role")
    if role == "tool":
        return origins.get(("tool", str(message.get("tool_call_id"))))
    if role == "assistant":
        for c in message.get("tool_calls") or []:
            if isinstance(c, Mapping) and ("call", str(c.get("id"))) in origins:
                return origins[("call", str(c.get("id")))]
        return origins.get(("content", str(message.get("content") or "")))
    if role == "user":
        return origins.get(("user", str(message.get("content"))))
    return None


def message_block(index: int, message: Mapping[str, Any], origins: Origins,
                  before: int | None = None) -> Block:
    """One message of the recorded request, labelled by the event it came from."""
    role = str(message.get("role", "?"))
    origin = _origin(message, origins)
    if origin is not None and before is not None and origin.seq >= before:
        origin = None
    where = (f"from {origin.step_id or origin.type} ({origin.type} seq {origin.seq})"
             if origin is not None else "origin not recorded in this run")
    flavor = {"user": "user", "assistant": "assistant", "tool": "tool-result"}.get(role, role)
    details = [("message", f"#{index} role {role}"),
               ("origin", summarize(origin, 120) if origin is not None else where)]
    if message.get("tool_call_id"):
        details.append(("tool call", str(message["tool_call_id"])))
    return Block(slot="messages", label=f"{role} · {where}",
                 text=_message_text(message), flavor=flavor, details=tuple(details))


def request_messages(call: LLMStart | None) -> list[Mapping[str, Any]] | None:
    if call is None or not call.request_ref:
        return None
    try:
        request = json.loads(call.request_ref)
    except ValueError:
        return None
    messages = request.get("messages") if isinstance(request, dict) else None
    return [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else None


def _blocks(iteration_events: Sequence[Event], call: LLMStart | None,
            origins: Origins, by_seq: Mapping[int, Event]) -> dict[str, tuple[Block, ...]]:
    limit = call.seq if call is not None else None
    out: dict[str, list[Block]] = {slot: [] for slot in SLOTS}
    for e in iteration_events:
        if isinstance(e, ContextInjected) and (limit is None or e.seq < limit):
            out.setdefault(e.slot, []).append(injected_block(e, by_seq))
    messages = request_messages(call)
    delivered = sum(isinstance(e, ContextInjected) and e.slot == "messages"
                    and e.admitted_via == "delivered" for e in iteration_events)
    if messages is not None and delivered == len(messages) > 0:
        pass  # a run mapped from a foreign trace: each message is a piece naming its origin
    elif messages is not None:
        out["messages"] += [message_block(i, m, origins, limit) for i, m in enumerate(messages)]
    elif call is not None:
        out["messages"].append(Block(
            slot="messages", label="request not recorded", flavor="note",
            text="The request text was not recorded (redacted or capture off); only its "
                 f"hash is: {call.request_hash}"))
    return {slot: _once(blocks) for slot, blocks in out.items()}


def _host(blocks: Sequence[Block], doc: Block) -> int | None:
    """The index of the first non-document block whose text holds ``doc``'s text."""
    if doc.flavor != "rag" or not doc.text:
        return None
    return next((j for j, o in enumerate(blocks) if o.flavor != "rag" and doc.text in o.text),
                None)


def _once(blocks: Sequence[Block]) -> tuple[Block, ...]:
    """Each document shown once: a retrieved document whose text is inside another block of
    the slot (an instruction or a user message holding it, as a foreign trace records it)
    is named in that block's details rather than shown again."""
    hosts = [_host(blocks, b) for b in blocks]
    held: dict[int, list[str]] = {}
    for b, host in zip(blocks, hosts, strict=True):
        if host is not None:
            held.setdefault(host, []).append(b.label.split(" · ", 1)[0])
    return tuple(replace(b, details=(*b.details, ("holds", ", ".join(held[i]))))
                 if i in held else b for i, b in enumerate(blocks) if hosts[i] is None)


def _iteration(number: int, mine: Sequence[Event], origins: Origins,
               by_seq: Mapping[int, Event]) -> Iteration:
    move = next((e.cursor_move for e in mine if isinstance(e, ContextEvaluated)), None)
    call = next((e for e in mine if isinstance(e, LLMStart)), None)
    tokens = sum((e.input_tokens or 0) + (e.output_tokens or 0)  # unknown (None) adds 0
                 for e in mine if isinstance(e, LLMEnd))
    return Iteration(
        number=number, move=move, call=call, tokens=tokens,
        tools=tuple(e.tool_name for e in mine if isinstance(e, ToolStart)),
        refusals=sum(isinstance(e, SkillRejected) for e in mine),
        blocks=_blocks(mine, call, origins, by_seq),
    )


def build_iteration(number: int, events: Sequence[Event], lookups: Sequence[Event]) -> Iteration:
    """Iteration ``number`` from its own events, plus ``lookups``: the events its blocks name
    (admitting events, and where its request's messages came from), from anywhere in the run."""
    known = sorted({e.seq: e for e in (*lookups, *events)}.values(), key=lambda e: e.seq)
    by_seq = {e.seq: e for e in known}
    return _iteration(number, events, origins_index(known), by_seq)


def _status(events: Sequence[Event]) -> str:
    if any(isinstance(e, RunEnd) for e in events):
        return "complete"
    return "failed" if any(isinstance(e, RunFailed) for e in events) else "incomplete"


def _model_name(events: Sequence[Event]) -> str:
    for e in events:
        if isinstance(e, RunConfigured | LLMStart):
            return e.model
    return "?"


def build_run(run_id: str, events: Sequence[Event]) -> RunView:
    """The run's iterations (1, 2, …) with what each model call saw."""
    by_seq = {e.seq: e for e in events}
    origins = origins_index(events)
    grouped: dict[int, list[Event]] = {}
    for e in events:
        if e.iteration > 0:
            grouped.setdefault(e.iteration, []).append(e)
    end = next((e for e in reversed(events) if isinstance(e, RunEnd)), None)
    return RunView(
        run_id=run_id, status=_status(events), model=_model_name(events),
        answer=end.final_content if end is not None else None,
        iterations=tuple(_iteration(n, grouped[n], origins, by_seq) for n in sorted(grouped)),
        events=tuple(events),
    )
