"""Candidates: every recorded thing on the answer's causal past, with its custody chain.

Kinds: ``injection`` (a piece of any prompt on the path, any slot — a
tools-slot piece names the tools it added), ``tool_result`` (a result a call
on the path read, back to the call that chose the tool), ``message`` (a
history message of an earlier turn, by origin), ``cursor_move`` (a move with
its guard conditions and the values seen; a ``stay`` is followed back to
the move that entered the skill), ``gate`` (a refused skill read, a tool
effect, an escalation) and ``lease`` (a lease granted to an instruction).

Each candidate says how it could be removed (:class:`Removal`) — an
injection by ``without(id)``, a tool result by dropping its tool, a history
message by withholding it — or is evidence only. Scores are word overlap
with the answer: resemblance, never cause.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    InjectionDeclared,
    LLMEnd,
    SkillEscalated,
    SkillRejected,
    ToolEffect,
    ToolEnd,
    ToolStart,
)
from footprint.events._evidence import CursorMove, GuardRecord
from lens.explain._custody import overlap
from lens.explain._outcome import is_redacted
from lens.explain._past import (
    HistoryMessage,
    Landing,
    Past,
    landings_of,
    moves_of,
    request_messages,
)
from lens.playback._stream import clip

__all__ = ["Candidate", "CandidateKind", "Removal", "candidates", "guard_text", "one_per_removal"]

CandidateKind = Literal["injection", "tool_result", "message", "cursor_move", "gate", "lease",
                        "tool_definition"]


@dataclass(frozen=True, slots=True, order=True)
class Removal:
    """How to take a candidate out of a re-run: ``without`` an injection, drop a tool,
    hide a skill, or withhold a history message (by its index in the request); a
    ``piece`` is a piece of one recorded request, for the re-send tier."""

    what: Literal["injection", "tool", "skill", "message", "piece"]
    key: str

    def describe(self) -> str:
        return {"injection": f"without {self.key!r}", "tool": f"tool {self.key!r} dropped",
                "skill": f"skill {self.key!r} hidden",
                "message": f"history message {self.key} withheld",
                "piece": f"{self.key!r} removed from the request"}[self.what]


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One thing the answer may depend on, with the recorded events that put it there."""

    kind: CandidateKind
    id: str
    label: str
    flavor: str | None
    step_id: str
    seq: int
    chain: tuple[str, ...]
    excerpt: str
    score: float | None
    removal: Removal | None = None
    evidence_only: str | None = None
    redacted: bool = False
    reach: tuple[str, ...] = ()
    """The model calls on the path this candidate was part of (landed in, read by)."""
    chosen_by: tuple[str, ...] = ()
    """For a tool result: the model call(s) that chose the tool call."""
    calls: tuple[str, ...] = ()
    """For a removal that covers several recorded calls: every one of them."""
    carried_by: str | None = None
    """For a result of a tool an injection carries: that injection (``custom 'oms'``)."""
    call: str = ""
    """For a tool result: the call as made, ``lookup_price(sku="A12")`` (the path names it)."""


def _score(text: str, answer: str) -> float | None:
    if is_redacted(text) is not None or is_redacted(answer) is not None:
        return None
    return round(overlap(text, answer), 4)


def _span(steps: Sequence[str]) -> str:
    uniq = list(dict.fromkeys(steps))
    if not uniq:
        return "no call on the path"
    return uniq[0] if len(uniq) == 1 else f"{uniq[0]}…{uniq[-1]} ({len(uniq)} calls)"


def _allowed(g: Landing, by_seq: Mapping[int, Event]) -> str:
    a = by_seq.get(g.admitted_by) if g.admitted_by is not None else None
    if a is None:
        return f"ALLOWED {g.admitted_via}"
    what: str = a.type
    if isinstance(a, ContextEvaluated) and a.cursor_move is not None and g.admitted_via == "cursor":
        m = a.cursor_move
        what += f" cursor {m.from_skill or 'start'}→{m.to} by {m.by}"
    elif isinstance(a, ToolEnd):
        what += f" {a.tool_name} #{a.tool_call_id}"
    elif isinstance(a, ToolEffect):
        what += f" {a.kind} from {a.tool_name}"
    return f"ALLOWED {g.admitted_via} ({what}, seq {a.seq})"


def _tool_name(e: ContextInjected) -> str:
    text = e.raw_content or e.content_summary
    return text.split(":", 1)[0].strip()


def _injection(group: list[Landing], past: Past,
               born: Mapping[str, InjectionDeclared]) -> Candidate:
    first, last = group[0].piece, group[-1]
    iid = first.injection_id or first.source
    slots = sorted({g.piece.slot for g in group})
    tools = sorted({_tool_name(g.piece) for g in group if g.piece.slot == "tools"})
    texts = {g.piece.content_hash: g.piece for g in group if g.piece.slot != "tools"} or {
        g.piece.content_hash: g.piece for g in group}
    shown = list(texts.values())[-1]
    text = shown.raw_content or shown.content_summary
    b = born.get(first.injection_id or "")
    kind = next((g.piece.source for g in group if g.piece.slot != "tools"),
                b.flavor if b is not None else first.source)  # a tools piece says 'registry'
    label = f"{kind} {iid!r}" if first.injection_id else first.source
    if tools:
        label += f" (+tools {', '.join(tools)})"
    chain = [f"LANDED {'+'.join(slots)} of {_span([g.step for g in group])}",
             _allowed(last, past.by_seq)]
    if b is not None:
        chain.append(f"BORN injection.declared seq {b.seq} ({b.flavor}, {b.trigger_kind})")
    removal = Removal("injection", first.injection_id) if first.injection_id else None
    why_not = None if removal else ("the agent's own system prompt" if first.source == "base"
                                    else f"the agent's own {first.source} piece")
    scores = [_score(p.raw_content or p.content_summary, past.ranked_by) for p in texts.values()]
    score = max((x for x in scores if x is not None), default=None)
    return Candidate(kind="injection", id=iid, label=label, flavor=kind,
                     step_id=last.step, seq=last.seq, chain=tuple(chain),
                     excerpt=clip(text, 80), score=score, removal=removal,
                     evidence_only=why_not, redacted=is_redacted(text) is not None,
                     reach=tuple(dict.fromkeys(g.step for g in group)))


def _injections(events: Sequence[Event], past: Past,
                landings: Sequence[Landing] | None) -> list[Candidate]:
    groups: dict[tuple[str, str], list[Landing]] = {}
    for g in landings if landings is not None else landings_of(events, past):
        e = g.piece
        key: tuple[str, str] = (e.injection_id or "",
                                str(e.source) if e.injection_id is None else "")
        if e.injection_id is None and e.slot == "tools":
            key = ("", f"registry:{_tool_name(e)}")
        groups.setdefault(key, []).append(g)
    born = {e.injection_id: e for e in events if isinstance(e, InjectionDeclared)}
    return [_injection(g, past, born) for g in groups.values()]


def _readers(past: Past) -> tuple[list[int], list[str]]:
    calls = sorted(past.calls, key=lambda c: c.start.seq)
    return [c.start.seq for c in calls], [c.step_id for c in calls]


def _asked(events: Sequence[Event], past: Past) -> dict[str, Mapping[str, Any]]:
    """Each tool call's arguments: from the replies read, else from the explained call's
    request (its history holds every earlier tool call of the run)."""
    asked: dict[str, Mapping[str, Any]] = {
        c.id: c.arguments for e in events if isinstance(e, LLMEnd) for c in e.tool_calls}
    for m in request_messages(past.explained.start) or ():
        for call in m.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("arguments"), dict):
                asked.setdefault(str(call.get("id")), call["arguments"])
    return asked


def _carriers(events: Sequence[Event], landings: Sequence[Landing]) -> dict[str, str]:
    """Tool name -> the injection that carries it (``fact 'pricing'``), from the tools slot."""
    born = {e.injection_id: e.flavor for e in events if isinstance(e, InjectionDeclared)}
    return {_tool_name(g.piece): f"{born.get(g.piece.injection_id, 'injection')} "
            f"{g.piece.injection_id!r}" for g in landings
            if g.piece.slot == "tools" and g.piece.injection_id}


def _tool_results(events: Sequence[Event], past: Past,
                  carried: Mapping[str, str]) -> list[Candidate]:
    read = set(past.explained.reads)
    seqs, steps = _readers(past)
    starts = {e.tool_call_id: e for e in events if isinstance(e, ToolStart)}
    asked = _asked(events, past)
    out: list[Candidate] = []
    for e in events:
        if not isinstance(e, ToolEnd) or e.tool_call_id not in read:
            continue
        s = starts.get(e.tool_call_id)
        given = s.args if s is not None else asked.get(e.tool_call_id)
        args = clip(json.dumps(dict(given), sort_keys=True), 50) if given is not None else "…"
        chooser = e.parent_step or (s.parent_step if s is not None else None) or "?"
        readers = steps[bisect.bisect_right(seqs, e.seq):]
        chain: tuple[str, ...] = (f"READ by {_span(readers)}",
                                  f"RETURNED by {e.tool_name}({args}) seq {e.seq}",
                                  f"CHOSEN by {chooser} (iteration {e.iteration})")
        owner = carried.get(e.tool_name)
        if owner is not None:
            chain += (f"CARRIED by {owner}: the tool comes with it",)
        out.append(Candidate(
            kind="tool_result", id=e.tool_call_id, label=f"tool {e.tool_name} #{e.tool_call_id}",
            flavor=e.tool_name, step_id=e.step_id, seq=e.seq, chain=chain,
            excerpt=clip(e.result, 80), score=_score(e.result, past.ranked_by),
            removal=None if owner else Removal("tool", e.tool_name),
            evidence_only=f"tool {e.tool_name!r} comes with {owner}; removing {owner} "
            "removes it (tested as that injection)" if owner else None,
            redacted=is_redacted(e.result) is not None,
            reach=tuple(readers), chosen_by=(chooser,), calls=(e.tool_call_id,),
            carried_by=owner, call=call_text(e.tool_name, given)))
    return out


def call_text(tool: str, args: Mapping[str, object] | None) -> str:
    """``lookup_price(sku="A12")``: a tool call with its arguments as the model gave them
    (``lookup_price(…)`` when they were not recorded), each value clipped."""
    if args is None:
        return f"{tool}(…)"
    given = ", ".join(f"{k}={clip(json.dumps(v, ensure_ascii=False), 30)}"
                      for k, v in args.items())
    return f"{tool}({clip(given, 70)})"


def _origin(m: HistoryMessage, earlier: Sequence[Event]) -> tuple[str, Event | None]:
    """``(origin, the event that wrote it)`` of an earlier-turn message, matched against
    earlier runs (a reply that called tools by its calls' ids, else by its text)."""
    if m.role == "user":
        hit = next((e for e in earlier if getattr(e, "user_message", None) == m.content), None)
        return "person", hit
    if m.role == "tool" and m.tool_call_id:
        hit = next((e for e in earlier if isinstance(e, ToolEnd)
                    and e.tool_call_id == m.tool_call_id), None)
        return f"tool#{m.tool_call_id}", hit
    hit = next((e for e in earlier if isinstance(e, LLMEnd) and (
        any(c.id in m.calls for c in e.tool_calls) if m.calls else e.content == m.content)),
        None)
    return (hit.step_id if hit else "llm#?"), hit


def _message_label(role: str, origin: str, hit: Event | None) -> str:
    """``assistant message llm#2 of turn 1``: step ids restart every turn, so the turn
    (counted from 1) tells two earlier turns' ``llm#1`` apart."""
    who = "" if origin == "person" else f" {origin}"
    return f"{role} message{who}" + (f" of turn {hit.turn + 1}" if hit is not None else "")


def _messages(past: Past, earlier: Sequence[Event]) -> list[Candidate]:
    out: list[Candidate] = []
    for m in past.history:
        origin, hit = _origin(m, earlier)
        run = hit.run_id if hit is not None else "?"
        out.append(Candidate(
            kind="message", id=f"msg#{m.index}", label=_message_label(m.role, origin, hit),
            flavor=origin, step_id=past.explained.step_id, seq=-1,
            chain=(f"CARRIED as history message {m.index} of {past.explained.step_id}",
                   f"WRITTEN by {origin} in an earlier turn (run {run})"),
            excerpt=clip(m.content, 80), score=_score(m.content, past.ranked_by),
            removal=Removal("message", str(m.index)), redacted=is_redacted(m.content) is not None,
            reach=tuple(c.step_id for c in past.calls)))
    return out


def guard_text(g: GuardRecord) -> str:
    """``amount lte 100 (saw 40) ✓ AND risk eq 'low' (saw "low") ✓`` — the guard as judged."""
    conds = " AND ".join(f"{c.key} {c.op} {c.value!r} (saw {c.actual_summary}) "
                         f"{'✓' if c.passed else '✗'}" for c in g.conditions)
    return f"guard on {g.tool_name} {g.from_skill}→{g.to}: {conds} → " + (
        "passed" if g.verdict else "failed")


def _move_line(m: CursorMove, seq: int) -> str:
    text = f"cursor {m.from_skill or 'start'}→{m.to or '∅'} by {m.by} at seq {seq}"
    if m.witness:
        text += f" (witness {m.witness!r})"
    return text


def _moves(events: Sequence[Event], past: Past) -> list[Candidate]:
    out: list[Candidate] = []
    entering: dict[str, tuple[CursorMove, int]] = {}
    for e in moves_of(events, past):
        m = own = e.cursor_move
        assert m is not None and own is not None
        chain = [_move_line(m, e.seq)]
        if m.by == "stay":
            back = entering.get(m.to or "")
            if back is None or e.iteration != past.explained.start.iteration:
                continue
            chain.append(f"ENTERED by {_move_line(*back)}")
            m = back[0]
        elif m.to:
            entering[m.to] = (m, e.seq)
        chain += [guard_text(g) for g in (m.guard, *m.guards_closed) if g is not None]
        out.append(Candidate(
            kind="cursor_move", id=f"move@{e.seq}", label=_move_line(own, e.seq)[:60],
            flavor=own.by, step_id=e.step_id, seq=e.seq, chain=tuple(chain),
            excerpt=clip(chain[-1], 80), score=None,
            removal=Removal("skill", m.to) if m.to else None,
            evidence_only=None if m.to else "a routing decision that entered no skill",
            reach=tuple(c.step_id for c in past.calls if c.start.seq > e.seq)))
    return out


def _gates(events: Sequence[Event], past: Past) -> list[Candidate]:
    read = {r for c in past.calls for r in c.reads}
    upto = past.explained.start.seq
    out: list[Candidate] = []
    for e in events:
        if e.seq >= upto:
            continue
        if isinstance(e, SkillRejected) and (e.tool_call_id in read or e.tool_call_id is None):
            text = (f"refused read_skill({e.requested_id!r}): {e.reason}; allowed "
                    f"{', '.join(e.allowed) or 'none'}")
            out.append(Candidate(kind="gate", id=f"gate@{e.seq}", label=clip(text, 60),
                                 flavor=e.reason, step_id=e.step_id, seq=e.seq,
                                 chain=(f"{text} (seq {e.seq})",), excerpt=clip(text, 80),
                                 score=None, evidence_only="a gate decision"))
        elif isinstance(e, SkillEscalated):
            text = (f"escalated after {e.refusals} refusals: {e.from_provider}/{e.from_model} → "
                    f"{e.to_provider}/{e.to_model or '(same model)'}")
            out.append(Candidate(kind="gate", id=f"gate@{e.seq}", label=clip(text, 60),
                                 flavor="escalation", step_id=e.step_id, seq=e.seq,
                                 chain=(f"{text} (seq {e.seq})",), excerpt=clip(text, 80),
                                 score=None, evidence_only="an escalation decision"))
        elif isinstance(e, ToolEffect) and (e.tool_call_id in read or e.tool_call_id is None):
            out.append(_effect(e))
    return out


def _effect(e: ToolEffect) -> Candidate:
    lease = e.instruction_id is not None or e.delivery_lease is not None
    target = e.instruction_id or e.target_skill_id or "?"
    text = (f"{e.kind} {target!r} from {e.tool_name}: {e.outcome}"
            + (f" (lease {e.delivery_lease})" if e.delivery_lease else "")
            + (f" — {e.refusal_reason}" if e.refusal_reason else ""))
    kind: CandidateKind = "lease" if lease else "gate"
    why_not = (f"a lease grant; the instruction {target!r} it kept alive is tested as an "
               "injection" if lease else "a gate decision on a tool's side request")
    return Candidate(kind=kind, id=f"{kind}@{e.seq}", label=clip(text, 60), flavor=e.kind,
                     step_id=e.step_id, seq=e.seq,
                     chain=(f"{'GRANTED' if lease else 'DECIDED'} by tool.effect seq {e.seq}: "
                            f"{text}",), excerpt=clip(text, 80), score=None,
                     evidence_only=why_not)


def candidates(events: Sequence[Event], past: Past, earlier: Sequence[Event] = (),
               landings: Sequence[Landing] | None = None) -> tuple[Candidate, ...]:
    """Every candidate on the causal past, ranked by overlap (unscored ones last).

    ``landings`` are the pieces on the path when the reader already found
    them (a store read), else they are found in ``events``.
    """
    landed = list(landings) if landings is not None else landings_of(events, past)
    found = [*_injections(events, past, landed), *_tool_results(events, past,
                                                               _carriers(events, landed)),
             *_messages(past, earlier), *_moves(events, past), *_gates(events, past)]
    return tuple(sorted(found, key=lambda c: (c.score is None, -(c.score or 0.0), c.seq)))


def _merged(group: Sequence[Candidate]) -> Candidate:
    best = group[0]
    calls = tuple(dict.fromkeys(x for c in sorted(group, key=lambda c: c.seq)
                                for x in (c.calls or (c.id,))))
    reach = tuple(dict.fromkeys(x for c in group for x in c.reach))
    label = (f"tool {best.flavor} ×{len(calls)} (#{calls[0]}…#{calls[-1]})"
             if best.kind == "tool_result" else f"{best.label} (+{len(group) - 1} more)")
    chain = best.chain if best.kind == "tool_result" else tuple(
        dict.fromkeys(x for c in group for x in c.chain))
    return replace(best, label=label, calls=calls, reach=reach,
                   chosen_by=tuple(dict.fromkeys(x for c in group for x in c.chosen_by)),
                   chain=(*chain, f"COVERS {len(calls)} recorded calls: "
                          f"{clip(', '.join(calls), 60)} — one removal, one experiment"))


def one_per_removal(cands: Sequence[Candidate]) -> tuple[Candidate, ...]:
    """Candidates sharing one removal (every call of a dropped tool, every move into a hidden
    skill) as one candidate listing the calls it covers: one experiment, one suspect."""
    groups: dict[Removal, list[Candidate]] = {}
    out: list[Candidate | Removal] = []
    for c in cands:
        if c.removal is None:
            out.append(c)
        elif c.removal in groups:
            groups[c.removal].append(c)
        else:
            groups[c.removal] = [c]
            out.append(c.removal)
    return tuple(x if isinstance(x, Candidate) else (
        groups[x][0] if len(groups[x]) == 1 else _merged(groups[x])) for x in out)
