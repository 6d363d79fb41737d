"""The host contract (spec §5, seed 000): what a host owes the skill graph.

The graph is a pure decision layer: it never calls a model, never sees a
tool call and never owns a loop. A host — our ``Agent`` or anyone else's —
must meet five obligations for the graph to route correctly. This module
states them as a ``Protocol`` a foreign host can type-check against, and
defines the plain tool descriptor the graph hands a host for ``read_skill``,
``list_skills`` and ``skip_step``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from footprint.injection._types import InjectionContext

__all__ = ["SkillGraphHost", "SkillToolDescriptor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillToolDescriptor:
    """A tool the graph describes but never constructs; the host adapts it.

    ``execute`` is pure: the same arguments give the same text, and no host
    context is passed.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    execute: Callable[[Mapping[str, Any]], str]


@runtime_checkable
class SkillGraphHost(Protocol):
    """The five obligations, as methods a host exposes (documentation as a type).

    1. ``advance_cursor(ctx)`` — build the iteration's ctx ONCE, ask the graph
       where the cursor goes with that exact object, and evaluate every
       trigger with that same object.
    2. ``accept_skill_pick(id, cursor)`` — check ``read_skill(id)`` against
       the graph's reachable skills (plus open skills) from the advanced
       cursor before it counts; refuse teachingly otherwise.
    3. ``publish_accepted_pick(id)`` — set ``pending_skill_pick`` only for an
       accepted hop, and clear it (``None``) at the top of every iteration.
    4. ``carry_cursor(next_id)`` — the advanced cursor becomes the next
       iteration's ``current_skill_id``; a new run starts at the entry
       unless the host persists the cursor itself.
    5. ``emit_skill_event(name, payload)`` — at least ``skill.activated``,
       ``skill.deactivated``, ``skill.rejected`` and ``skill.route_conflict``;
       ideally also ``skill.escalated``, ``skill.reroute_superseded`` and
       ``skill.turn_routed``.
    """

    def advance_cursor(self, ctx: InjectionContext) -> str | None: ...

    def accept_skill_pick(self, skill_id: str, current_skill_id: str | None) -> bool: ...

    def publish_accepted_pick(self, skill_id: str | None) -> None: ...

    def carry_cursor(self, next_skill_id: str | None) -> None: ...

    def emit_skill_event(self, name: str, payload: Mapping[str, object]) -> None: ...
