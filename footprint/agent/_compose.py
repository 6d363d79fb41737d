"""Deliver and compose: what lands in each slot of the next model call, and why.

Every piece that lands is recorded as a ``context.injected`` event naming
its injection, slot, position, content hash and the event that admitted it;
each slot then gets one ``context.slot_composed`` (and a
``context.budget_pressure`` when the system slot overflows its cap).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from footprint.agent._emitter import RunEmitter
from footprint.agent._engine import Frame, admission_of
from footprint.agent._setup import AgentSetup
from footprint.agent._state import INJECTION_ORIGIN, Evidence, RunState
from footprint.events import (
    BudgetPressure,
    ContextInjected,
    SlotComposed,
    SourceShare,
    summarize_content,
)
from footprint.graph import menu_outstanding
from footprint.graph._steps import held_out_tools, step_tool_description
from footprint.hostkit import SkillToolDescriptor, skip_step_descriptor
from footprint.hostkit._descriptors import skill_descriptors
from footprint.injection import Injection, SkillTool, project_active_injection
from footprint.injection._types import ContextSource, Slot
from footprint.providers import Message, ToolSpec

__all__ = ["SYSTEM_CAP", "Composition", "OfferedTool", "compose", "content_hash"]

SYSTEM_CAP = 4000
ToolKind = Literal["baseline", "skill", "read_skill", "list_skills", "skip_step"]


def content_hash(text: str) -> str:
    """The SHA-256 of ``text`` (hex), the join key between events and blobs.

    A lone surrogate (``"\\ud800"``, which a person or a model may send but
    UTF-8 cannot spell) is hashed in the escaped form the store keeps it in
    (``\\ud800``, six characters), so the hash still joins to the stored text.
    """
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class OfferedTool:
    """One tool in this iteration's tools slot and what runs it."""

    spec: ToolSpec
    kind: ToolKind
    tool: SkillTool | None = None
    descriptor: SkillToolDescriptor | None = None
    injection_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Composition:
    """The three slots as composed for one model call."""

    system: str
    tools: tuple[OfferedTool, ...]

    def tool(self, name: str) -> OfferedTool | None:
        return next((t for t in self.tools if t.spec.name == name), None)


@dataclass(slots=True)
class _Piece:
    text: str
    source: ContextSource
    reason: str
    proof: Evidence | None  # None: the admission of ``admitted``, found only when recorded
    injection_id: str | None = None
    as_role: Literal["system", "user", "assistant", "tool"] | None = None
    admitted: Injection | None = None


def _digest(state: RunState, text: str) -> tuple[str, str]:
    """The piece's hash and summary, computed once per run for each distinct text."""
    known = state.digests.get(text)
    if known is None:
        known = state.digests[text] = (content_hash(text), summarize_content(text))
    return known


def _record(em: RunEmitter, state: RunState, frame: Frame, slot: Slot,
             pieces: list[_Piece]) -> None:
    step = f"engine#{frame.iteration}"
    for position, p in enumerate(pieces):
        digest, summary = _digest(state, p.text)
        proof = p.proof
        if proof is None:
            assert p.admitted is not None
            proof = admission_of(p.admitted, frame, state)
        em.emit(
            ContextInjected, step, slot=slot, source=p.source, content_hash=digest,
            content_summary=summary, reason=p.reason,
            admitted_via=proof.via,
            injection_id=p.injection_id, position=position, as_role=p.as_role,
            raw_content=p.text, admitted_by=proof.seq,
        )


def _composed(em: RunEmitter, step: str, slot: Slot, pieces: list[_Piece], cap: int) -> None:
    shares: dict[str, list[int]] = {}
    for p in pieces:
        share = shares.setdefault(p.source, [0, 0])
        share[0] += len(p.text)
        share[1] += 1
    used = sum(len(p.text) for p in pieces) + (2 * (len(pieces) - 1) if slot == "system-prompt"
                                               and pieces else 0)
    em.emit(SlotComposed, step, slot=slot, cap=cap, used=used,
            headroom_chars=max(cap - used, 0) if cap else 0,
            source_breakdown=tuple(SourceShare(source=s, chars=c, count=n)
                                   for s, (c, n) in shares.items()))
    if cap and used > cap:
        em.emit(BudgetPressure, step, slot=slot, overflow_by=used - cap, plan_action="none",
                unit="chars", cap=cap, projected=used)


def _reason(inj: Injection) -> str:
    return inj.description or f"{inj.flavor} '{inj.id}' active"


def _system_texts(setup: AgentSetup, frame: Frame) -> Iterator[tuple[Injection | None, str]]:
    """Each text of the system slot, in order, with the injection it comes from."""
    if setup.system_prompt:
        yield None, setup.system_prompt
    for inj in frame.active:
        if inj.flavor == "skill" and inj.metadata.get("surface_mode") == "tool-only":
            continue
        text = inj.inject.system_prompt
        if text and inj.templated:  # only a template needs this iteration's facts
            text = project_active_injection(inj, frame.ctx).inject.system_prompt
        if text:
            yield inj, text


def _system_pieces(setup: AgentSetup, frame: Frame, base: Evidence) -> list[_Piece]:
    return [
        _Piece(text, "base", "the agent's system prompt", base) if inj is None
        else _Piece(text, inj.flavor, _reason(inj), None, injection_id=inj.id, admitted=inj)
        for inj, text in _system_texts(setup, frame)
    ]


def deliver(setup: AgentSetup, frame: Frame, state: RunState) -> None:
    """Append active injections' messages to history once per run (deduped by content)."""
    for inj in frame.active:
        for msg in inj.inject.messages:
            key = (inj.id, msg.role, msg.content)
            if key in state.delivered:
                continue
            tail = state.history[-1] if state.history else None
            if tail is not None and tail.role == msg.role:
                continue  # a tail collision defers the append to a later boundary
            state.delivered.add(key)
            state.history.append(Message(role=msg.role, content=msg.content,
                                         origin=INJECTION_ORIGIN + inj.id))
            state.delivered_evidence.setdefault(inj.id, admission_of(inj, frame, state))


def _message_pieces(setup: AgentSetup, state: RunState) -> list[_Piece]:
    pieces: list[_Piece] = []
    for m in state.history:
        if m.origin is None or not m.origin.startswith(INJECTION_ORIGIN):
            continue
        inj_id = m.origin[len(INJECTION_ORIGIN):]
        inj = setup.injection(inj_id)
        proof = state.delivered_evidence.get(inj_id)
        if inj is None or proof is None:
            continue
        pieces.append(_Piece(m.content, inj.flavor, _reason(inj),
                             Evidence(proof.seq, proof.step_id, "delivered"),
                             injection_id=inj_id, as_role=m.role))
    return pieces


def _spec(name: str, description: str, schema: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema=dict(schema))


def _skill_offers(setup: AgentSetup, frame: Frame, state: RunState,
                  base: Evidence) -> list[tuple[OfferedTool, _Piece]]:
    active = {i.id: i for i in frame.active}
    hidden = set(setup.hidden_skills)
    held = held_out_tools(setup.plans, frame.ctx.step_pointer)
    carried = {t.name for i in frame.active for t in i.inject.tools
               if i.id != (frame.ctx.step_pointer.skill_id if frame.ctx.step_pointer else None)}
    out: list[tuple[OfferedTool, _Piece]] = []
    for name, (tool, owner) in setup.skill_tools.items():
        inj = setup.injection(owner)
        if inj is None or owner in hidden or name in setup.baseline_tools:
            continue
        gated = inj.metadata.get("auto_activate") == "currentSkill"
        if (gated and owner not in active) or (name in held and name not in carried):
            continue
        proof = None if gated else base
        desc = step_tool_description(setup.plans, frame.ctx.step_pointer, name,
                                     tool.schema.description)
        spec = _spec(name, desc, tool.schema.input_schema)
        source: ContextSource = "skill" if gated else "registry"
        out.append((OfferedTool(spec=spec, kind="skill", tool=tool, injection_id=owner),
                    _Piece(f"{name}: {desc}", source, f"tool of skill '{owner}'", proof,
                           injection_id=owner, admitted=inj)))
    return out


def _engine_tools(setup: AgentSetup, frame: Frame, base: Evidence) -> list[OfferedTool]:
    skills = setup.skills
    if not skills:
        return []
    cursor = frame.cursor
    tr = frame.ctx.turn_route
    offer = tr if menu_outstanding(tr, cursor) else None
    target = setup.graph if setup.graph is not None else skills
    descs = [*skill_descriptors(target, cursor=cursor, offer=offer, hidden=setup.hidden_skills,
                                plans=setup.plans)]
    if setup.plans and frame.ctx.step_pointer is not None:
        pointer = frame.ctx.step_pointer
        if pointer.step <= pointer.total:
            descs.append(skip_step_descriptor(setup.plans, pointer))
    return [OfferedTool(spec=_spec(d.name, d.description, d.input_schema),
                        kind=d.name, descriptor=d) for d in descs]  # type: ignore[arg-type]


def _tools(setup: AgentSetup, frame: Frame, state: RunState,
           base: Evidence) -> tuple[list[OfferedTool], list[_Piece]]:
    offered: list[OfferedTool] = []
    pieces: list[_Piece] = []
    for name, tool in setup.baseline_tools.items():
        desc = step_tool_description(setup.plans, frame.ctx.step_pointer, name,
                                     tool.schema.description)
        offered.append(OfferedTool(spec=_spec(name, desc, tool.schema.input_schema),
                                   kind="baseline", tool=tool))
        pieces.append(_Piece(f"{name}: {desc}", "registry", "baseline tool", base))
    for offer, piece in _skill_offers(setup, frame, state, base):
        offered.append(offer)
        pieces.append(piece)
    for engine_tool in _engine_tools(setup, frame, base):
        offered.append(engine_tool)
        spec = engine_tool.spec
        pieces.append(_Piece(f"{spec.name}: {spec.description}", "registry",
                             "skill tool registered by the agent", base))
    return offered, pieces


def _unrecorded(setup: AgentSetup, frame: Frame, state: RunState, em: RunEmitter,
                base: Evidence) -> Composition:
    """``compose`` for a sink that keeps no events: the same slots, the events only counted
    (one per piece, one per slot, and the system slot's budget pressure)."""
    texts = [text for _, text in _system_texts(setup, frame)]
    system = "\n\n".join(texts)
    offered, tool_pieces = _tools(setup, frame, state, base)
    em.skip(len(texts) + len(_message_pieces(setup, state)) + len(tool_pieces))
    em.skip(4 if len(system) > SYSTEM_CAP else 3)
    return Composition(system=system, tools=tuple(offered))


def compose(setup: AgentSetup, frame: Frame, state: RunState, em: RunEmitter,
            base: Evidence) -> Composition:
    """Deliver messages, compose the three slots, record every piece that landed."""
    step = f"engine#{frame.iteration}"
    deliver(setup, frame, state)
    if not em.keeps:
        return _unrecorded(setup, frame, state, em, base)
    system = _system_pieces(setup, frame, base)
    _record(em, state, frame, "system-prompt", system)
    messages = _message_pieces(setup, state)
    _record(em, state, frame, "messages", messages)
    offered, tool_pieces = _tools(setup, frame, state, base)
    _record(em, state, frame, "tools", tool_pieces)
    _composed(em, step, "system-prompt", system, SYSTEM_CAP)
    _composed(em, step, "messages", messages, 0)
    _composed(em, step, "tools", tool_pieces, 0)
    return Composition(system="\n\n".join(p.text for p in system), tools=tuple(offered))
