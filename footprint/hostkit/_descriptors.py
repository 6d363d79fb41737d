"""The tools the graph describes: ``read_skill``, ``list_skills``, ``skip_step``.

Each text lists what the model may do from here and never names a hidden
skill. A host wraps the descriptor in its own tool type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from footprint.graph._cascade import menu_outstanding
from footprint.graph._declare import SkillGraph
from footprint.graph._gate import check_pick
from footprint.graph._steps import (
    SKIP_STEP_INPUT_SCHEMA,
    SKIP_STEP_TOOL,
    StepPlan,
    read_skill_suffix,
    skip_step,
    skip_step_description,
)
from footprint.hostkit._contract import SkillToolDescriptor
from footprint.injection._types import Injection, StepPointer, TurnRoute

__all__ = ["list_skills_descriptor", "read_skill_descriptor", "skill_descriptors",
           "skip_step_descriptor"]

_NO_PLANS: Mapping[str, StepPlan] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class _View:
    """What the model may see from one cursor: visible skills, allowed, the rest."""

    skills: tuple[Injection, ...]
    graph: SkillGraph | None
    cursor: str | None
    hidden: frozenset[str]
    allowed: tuple[str, ...]
    menu: TurnRoute | None
    ids: tuple[str, ...]  # the visible skills' ids, in order
    by_id: Mapping[str, Injection]  # the visible skills by id

    def line(self, skill_id: str) -> str:
        skill = self.by_id[skill_id]
        return f"{skill_id} — {skill.description}" if skill.description else skill_id


def _view(graph_or_skills: SkillGraph | Sequence[Injection], cursor: str | None,
          offer: TurnRoute | None, hidden: Iterable[str]) -> _View:
    gone = frozenset(hidden)
    if isinstance(graph_or_skills, SkillGraph):
        graph: SkillGraph | None = graph_or_skills
        pool: Sequence[Injection] = graph_or_skills.declared_skills
        allowed = tuple(dict.fromkeys(
            graph_or_skills.reachable_skills(cursor, gone) + graph_or_skills.open_skills(gone)
        ))
    else:
        graph, pool = None, graph_or_skills
        allowed = tuple(s.id for s in pool if s.flavor == "skill" and s.id not in gone)
    skills = tuple(s for s in pool if s.flavor == "skill" and s.id not in gone)
    menu = offer if graph is not None and menu_outstanding(offer, cursor) else None
    by_id: dict[str, Injection] = {}
    for s in skills:
        by_id.setdefault(s.id, s)  # the first of a repeated id, as a scan would find
    return _View(skills=skills, graph=graph, cursor=cursor, hidden=gone, allowed=allowed,
                 menu=menu, ids=tuple(s.id for s in skills), by_id=by_id)


def _menu_lead(view: _View) -> str:
    route = view.menu
    if route is None or not route.offered:
        return ""
    shares = route.relevance or {}
    picks = [
        f"{sid} ({round(shares[sid] * 100)}%)" if sid in shares else sid
        for sid in route.offered if sid not in view.hidden
    ]
    stay = f", or STAY in '{route.from_skill}'" if route.stay_offered and route.from_skill else ""
    return f"This message fits several skills; pick one: {', '.join(picks)}{stay}. "


def _read_description(view: _View) -> str:
    head = "Read a skill by id to follow its instructions (and get its tools) from the next step. "
    if view.graph is None:
        return head + "Available skills: " + "; ".join(view.line(i) for i in view.ids) + "."
    parts = [head, _menu_lead(view)]
    if view.cursor is not None and view.cursor not in view.hidden:
        parts.append(f"You are in '{view.cursor}'. ")
    allowed = frozenset(view.allowed)
    reachable = [i for i in view.allowed if i in view.by_id]
    blocked = [i for i in view.ids if i not in allowed and i != view.cursor]
    parts.append("Reachable from here: " + ("; ".join(view.line(i) for i in reachable)
                                            if reachable else "none") + ".")
    if blocked:
        parts.append(" Not reachable from here (read_skill for these will be refused): "
                     + ", ".join(blocked) + ".")
    return "".join(parts)


def _activated_text(view: _View, skill_id: str, plans: Mapping[str, StepPlan]) -> str:
    skill = view.by_id[skill_id]
    mode = skill.metadata.get("surface_mode") or "auto"
    suffix = read_skill_suffix(plans, skill_id)
    if mode in ("tool-only", "both"):
        return (skill.inject.system_prompt or "") + suffix
    return f"Skill '{skill_id}' activated for the next iteration.{suffix}"


def _read_execute(view: _View, plans: Mapping[str, StepPlan], args: Mapping[str, Any]) -> str:
    requested = args.get("id")
    if not isinstance(requested, str) or not requested.strip():
        return f"read_skill needs an id: one of {', '.join(view.allowed) or 'no skill'}."
    if view.graph is not None:
        offered = view.menu.offered if view.menu is not None else None
        verdict = check_pick(view.graph, requested, view.cursor, menu=offered,
                             hidden=view.hidden)
        if not verdict.accepted:
            return verdict.text or f'read_skill("{requested}") is refused.'
    elif requested not in view.by_id:
        return f"Unknown skill '{requested}'. Available: {', '.join(view.ids)}."
    return _activated_text(view, requested, plans)


def read_skill_descriptor(
    graph_or_skills: SkillGraph | Sequence[Injection],
    *,
    cursor: str | None = None,
    offer: TurnRoute | None = None,
    hidden: Iterable[str] = (),
    plans: Mapping[str, StepPlan] | None = None,
) -> SkillToolDescriptor:
    """The ``read_skill`` tool as the model sees it from ``cursor``.

    On a graph, the text says which skills are reachable from here and
    which are not (a pick of those is refused), and leads with the menu when
    ``offer`` (the turn route) still has one outstanding. ``execute`` judges a
    pick with the graph's gate. Hidden ids appear nowhere.
    """
    return _read_skill(_view(graph_or_skills, cursor, offer, hidden), plans)


def _read_skill(view: _View, plans: Mapping[str, StepPlan] | None) -> SkillToolDescriptor:
    steps = plans if plans is not None else _NO_PLANS
    schema = MappingProxyType({
        "type": "object",
        "properties": {"id": {"type": "string", "enum": list(view.ids),
                              "description": "The id of the skill to read."}},
        "required": ["id"],
    })
    return SkillToolDescriptor(
        name="read_skill", description=_read_description(view), input_schema=schema,
        execute=lambda args: _read_execute(view, steps, args),
    )


def _list_execute(view: _View) -> str:
    if not view.ids:
        return "No skills are available."
    rows = []
    for sid in view.ids:
        mark = "" if view.graph is None else (
            " (you are here)" if sid == view.cursor
            else " (reachable)" if sid in view.allowed else " (not reachable from here)"
        )
        rows.append(f"- {view.line(sid)}{mark}")
    return "\n".join(rows)


def list_skills_descriptor(
    graph_or_skills: SkillGraph | Sequence[Injection],
    *,
    cursor: str | None = None,
    hidden: Iterable[str] = (),
) -> SkillToolDescriptor:
    """The ``list_skills`` tool: one line per visible skill, marked by reachability."""
    return _list_skills(_view(graph_or_skills, cursor, None, hidden))


def _list_skills(view: _View) -> SkillToolDescriptor:
    return SkillToolDescriptor(
        name="list_skills",
        description="List the skills you can read with read_skill, one line each"
        + (", marking which are reachable from here." if view.graph is not None else "."),
        input_schema=MappingProxyType({"type": "object", "properties": {}}),
        execute=lambda _args: _list_execute(view),
    )


def skill_descriptors(
    graph_or_skills: SkillGraph | Sequence[Injection],
    *,
    cursor: str | None = None,
    offer: TurnRoute | None = None,
    hidden: Iterable[str] = (),
    plans: Mapping[str, StepPlan] | None = None,
) -> tuple[SkillToolDescriptor, SkillToolDescriptor]:
    """``read_skill_descriptor(...)`` and ``list_skills_descriptor(...)`` from one view of
    the skills (``list_skills`` never shows the menu, so ``offer`` is the read's alone)."""
    view = _view(graph_or_skills, cursor, offer, hidden)
    return _read_skill(view, plans), _list_skills(view)


def skip_step_descriptor(
    plans: Mapping[str, StepPlan], pointer: StepPointer | None
) -> SkillToolDescriptor:
    """The ``skip_step(reason)`` tool for the step in progress (§2.9)."""
    return SkillToolDescriptor(
        name=SKIP_STEP_TOOL, description=skip_step_description(plans, pointer),
        input_schema=SKIP_STEP_INPUT_SCHEMA,
        execute=lambda args: skip_step(plans, pointer, args.get("reason")).text,
    )
