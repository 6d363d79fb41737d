"""Check-up rules over tools, bodies and the graph's size (§2.10)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from footprint.graph._matchers import Intent
from footprint.graph._problems import GraphProblem
from footprint.injection._types import Injection

if TYPE_CHECKING:
    from footprint.graph._declare import SkillGraph

__all__ = ["BUILTIN_TOOLS", "heuristic_problems", "tool_problems"]

BUILTIN_TOOLS = frozenset({"read_skill", "list_skills", "skip_step"})
_CALL = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\(")
_VERBS = frozenset({
    "get", "set", "list", "create", "update", "delete", "remove", "add", "read", "write",
    "fetch", "find", "search", "run", "make", "send", "check", "lookup", "query", "load",
    "save", "open", "close", "start", "stop", "put", "post", "patch", "compute", "build",
})
_MIN_SKILLS = 5
_MIN_ENTRIES = 3


def _warning(code: str, message: str, **where: str | None) -> GraphProblem:
    return GraphProblem(kind="warning", code=code, message=message, **where)


def _tools_of(skill: Injection) -> tuple[str, ...]:
    return tuple(t.schema.name for t in skill.inject.tools)


def _names_word(body: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", body) is not None


def _unusable(tools: Sequence[object]) -> list[GraphProblem]:
    return [
        GraphProblem(
            kind="error", code="unusable-tool-name",
            message=f"known tool name {t!r} is not a non-empty string; pass the agent's "
            "tool names as strings, e.g. known_tools=['lookup_order'].",
        )
        for t in tools
        if not isinstance(t, str) or not t.strip()
    ]


def _foreign(skill: Injection, skills: Sequence[Injection], baseline: set[str]) -> list[str]:
    body = skill.inject.system_prompt or ""
    own = set(_tools_of(skill))
    hits: list[str] = []
    for other in skills:
        if other.id == skill.id:
            continue
        for name in _tools_of(other):
            if name not in own and name not in baseline and _names_word(body, name):
                hits.append(f"{name!r} (a tool of {other.id!r})")
    return list(dict.fromkeys(hits))


def _body_problems(skill: Injection, skills: Sequence[Injection], baseline: set[str],
                   every: set[str]) -> list[GraphProblem]:
    body = skill.inject.system_prompt or ""
    found = [
        _warning(
            "body-foreign-tool",
            f"skill {skill.id!r}'s body names {hit}, which this skill does not carry, so "
            "the model is told to call a tool it will not have while here. Add the tool "
            "to the skill, make it a baseline tool, or reword the body.",
            skill=skill.id,
        )
        for hit in _foreign(skill, skills, baseline)
    ]
    for call in dict.fromkeys(_CALL.findall(body)):
        if call not in every:
            found.append(_warning(
                "body-unknown-tool",
                f"skill {skill.id!r}'s body calls {call}(...), which matches no known tool; "
                "fix the name, or add the tool to the agent or the skill.",
                skill=skill.id,
            ))
    return found


def tool_problems(graph: SkillGraph, tools: Sequence[object] | None) -> list[GraphProblem]:
    """``unusable-tool-name`` then ``body-*`` — only when the agent's tools are known."""
    if tools is None:
        return []
    found = _unusable(tools)
    baseline = {t for t in tools if isinstance(t, str)}
    skills = graph.declared_skills
    every = baseline | BUILTIN_TOOLS | {n for s in skills for n in _tools_of(s)}
    for skill in skills:
        found += _body_problems(skill, skills, baseline, every)
    return found


# ── size heuristics ───────────────────────────────────────────────────────


def _shared_prefix(names: Sequence[str]) -> str | None:
    heads = {n.split("_", 1)[0] for n in names if "_" in n}
    if len(names) < 3 or len(heads) != 1 or any("_" not in n for n in names):
        return None
    head = heads.pop()
    return None if head.lower() in _VERBS else head


def _skill_heuristics(skills: Sequence[Injection]) -> list[GraphProblem]:
    found: list[GraphProblem] = []
    for s in skills:
        names = _tools_of(s)
        if (prefix := _shared_prefix(names)) is not None:
            found.append(_warning(
                "tools-share-prefix",
                f"every tool of skill {s.id!r} starts with {prefix + '_'!r} "
                f"({', '.join(names)}): the prefix names the subject, and the skill may be "
                "a thin wrapper around one API. Consider splitting by task instead.",
                skill=s.id,
            ))
        words = len((s.inject.system_prompt or "").split())
        if len(names) == 1 and words < 25:
            found.append(_warning(
                "skill-wraps-one-tool",
                f"skill {s.id!r} carries one tool ({names[0]!r}) and a {words}-word body; "
                "a skill should teach a procedure. Make it a baseline tool or write the "
                "body.",
                skill=s.id,
            ))
    return found


def _entry_heuristics(graph: SkillGraph) -> list[GraphProblem]:
    conditional = [e for e in graph.entries if e.conditional]
    if len(conditional) < _MIN_ENTRIES:
        return []
    found: list[GraphProblem] = []
    sources = {r.from_skill for r in graph.routes}
    one_way = [e.skill_id for e in conditional if e.skill_id not in sources]
    if len(one_way) * 2 > len(conditional):
        found.append(_warning(
            "one-way-entries",
            f"{len(one_way)} of {len(conditional)} conditional entries "
            f"({', '.join(one_way)}) have no outgoing route: the graph is a router, not a "
            "flow. Declare the routes the work takes after entry.",
        ))
    has_examples = any(
        e.examples or (isinstance(e.match, Intent) and e.match.examples) for e in graph.entries
    )
    if not has_examples and not graph.never_routes:
        found.append(_warning(
            "no-negative-evidence",
            f"{len(conditional)} conditional entries but no examples and no never_routes, "
            "so the check-up cannot test what they claim. Add examples=... to the entries "
            "and .never_routes([...]) for messages that must not route.",
        ))
    return found


def heuristic_problems(graph: SkillGraph) -> list[GraphProblem]:
    """Size heuristics: per-skill (>= 5 skills), graph-wide, then entry-wide."""
    found: list[GraphProblem] = []
    skills = graph.declared_skills
    if len(skills) >= _MIN_SKILLS:
        found += _skill_heuristics(skills)
        if len(graph.routes) < 0.25 * len(skills):
            found.append(_warning(
                "few-declared-edges",
                f"{len(skills)} skills but only {len(graph.routes)} route(s): most moves "
                "are left to the model. Declare the routes the work follows.",
            ))
    return found + _entry_heuristics(graph)
