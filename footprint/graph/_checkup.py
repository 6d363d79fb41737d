"""The static check-up of a built flat skill graph (spec §2.10).

``checkup(graph, known_tools)`` returns a :class:`Checkup` whose problems
come out in the order of the spec's table. The wiring checks live here; the
matcher, example and never-routes checks in ``_checkup_rules.py``; the
body, tool and size heuristics in ``_checkup_tools.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from footprint._errors import did_you_mean
from footprint.graph._checkup_rules import (
    example_problems,
    never_route_problems,
    shadowing_problems,
)
from footprint.graph._checkup_tools import heuristic_problems, tool_problems
from footprint.graph._guards import compile_guard, unsatisfiable_reasons
from footprint.graph._problems import Checkup, GraphProblem
from footprint.graph._vocabulary import check_artifact_vocabularies

if TYPE_CHECKING:
    from footprint.graph._declare import Route, SkillGraph

__all__ = ["Checkup", "GraphProblem", "checkup"]

_NOTE = (
    "Examples and never_routes phrases were run against a cold context; silence "
    "means these texts route as declared, not that every message will. It is not "
    "proof of coverage."
)


def checkup(graph: SkillGraph, known_tools: Iterable[object] | None = None) -> Checkup:
    """Every non-tree check of §2.10, in table order.

    Without ``known_tools`` the ``body-*`` and ``unusable-tool-name`` checks
    are deferred (the agent build runs them with its real tools).
    """
    tools = None if known_tools is None else tuple(known_tools)
    problems: list[GraphProblem] = [
        *_intent_without_classify(graph),
        *_unknown_skills(graph),
        *_unsatisfiable_guards(graph),
        *_no_entry(graph),
        *_unreached(graph),
        *_entry_fanout(graph),
        *shadowing_problems(graph),
        *_ambiguous_routes(graph),
        *_self_loops(graph),
        *_duplicate_intent_examples(graph),
        *tool_problems(graph, tools),
        *check_artifact_vocabularies(graph.declared_skills),
    ]
    examples, checked_examples = example_problems(graph)
    never, checked_never = never_route_problems(graph)
    problems += [*examples, *never, *heuristic_problems(graph)]
    notes = (_NOTE,) if checked_examples or checked_never else ()
    return Checkup.of(problems, notes)


def _error(code: str, message: str, **where: str | None) -> GraphProblem:
    return GraphProblem(kind="error", code=code, message=message, **where)


def _warning(code: str, message: str, **where: str | None) -> GraphProblem:
    return GraphProblem(kind="warning", code=code, message=message, **where)


# ── wiring ────────────────────────────────────────────────────────────────


def _intent_without_classify(graph: SkillGraph) -> list[GraphProblem]:
    if graph.classifier is not None:
        return []
    return [
        _error(
            "intent-without-classify",
            f"entry {e.skill_id!r} is an intent entry, but the graph has no classifier, "
            "so nothing can ever route to it: add .classify(scorer) or give the entry "
            "a Regex/Keywords match.",
            skill=e.skill_id,
        )
        for e in graph.entries
        if e.is_intent
    ]


def _unknown_skills(graph: SkillGraph) -> list[GraphProblem]:
    known = set(graph.skill_ids)
    found: list[GraphProblem] = []
    named: list[tuple[str, str, str | None, str | None]] = [
        (e.skill_id, f"entry {e.skill_id!r}", None, None) for e in graph.entries
    ]
    for r in graph.routes:
        named += [(r.from_skill, f"route {r.from_skill} -> {r.to}", r.from_skill, r.to),
                  (r.to, f"route {r.from_skill} -> {r.to}", r.from_skill, r.to)]
    for sid, where, src, dst in named:
        if sid not in known:
            found.append(_error(
                "unknown-skill",
                f"{where} names {sid!r}, which is not a skill of this graph"
                f"{did_you_mean(sid, known)}; known skills: {', '.join(graph.skill_ids)}. "
                "Fix the id or add the skill.",
                skill=sid, from_skill=src, to=dst,
            ))
    return found


def _route_guard_reasons(route: Route) -> tuple[str, ...]:
    where = f"route {route.from_skill} -> {route.to}"
    guard = route.compiled_guard
    if guard is None and route.guard is not None:
        guard = compile_guard(route.guard, where=where)
    if guard is None:
        return ()
    return unsatisfiable_reasons(
        guard, on_tool_return=route.on_tool_return, on_tool_status=route.on_tool_status
    )


def _unsatisfiable_guards(graph: SkillGraph) -> list[GraphProblem]:
    return [
        _error(
            "guard-unsatisfiable",
            f"route {r.from_skill} -> {r.to}: its guard can never pass ({reason}), so the "
            "edge never fires. Fix the guard's conditions or remove the route.",
            from_skill=r.from_skill, to=r.to,
        )
        for r in graph.routes
        for reason in _route_guard_reasons(r)
    ]


def _no_entry(graph: SkillGraph) -> list[GraphProblem]:
    if graph.entries:
        return []
    return [_error(
        "no-entry",
        "the graph declares no entry, so a cold start can never place the cursor: "
        "add .entry(skill) (unconditional) or .entry(skill, match=...).",
    )]


def _reached(graph: SkillGraph) -> set[str]:
    seen = {e.skill_id for e in graph.entries}
    frontier = list(seen)
    while frontier:
        src = frontier.pop()
        for r in graph.routes:
            if r.from_skill == src and r.deterministic and r.to not in seen:
                seen.add(r.to)
                frontier.append(r.to)
    return seen


def _island_message(sid: str, sources: list[str]) -> str:
    names = ", ".join(repr(s) for s in sources)
    return (f"skill {sid!r} is not reached from any entry: the routes into it start at "
            f"{names}, which no entry or reached route leads to, so no run gets there; and "
            "because a route leads to it, it is not an open skill, so the read_skill gate "
            "refuses it too. Add an entry, or a route from a reached skill.")


def _model_edge_message(sid: str, islands: list[str]) -> str:
    """A skill only a bare route reaches; ``islands`` start deterministic routes into it
    that no run reaches (so they do not lead there either)."""
    if not islands:
        return (f"skill {sid!r} is reached only by a bare route (a model edge): no entry or "
                "deterministic route leads to it, so only the model's read_skill can go "
                "there. Add on_tool_return/on_tool_status/guard/when if it should route "
                "by evidence.")
    names = ", ".join(repr(s) for s in islands)
    return (f"skill {sid!r} is reached only by a bare route (a model edge): its deterministic "
            f"routes start at {names}, which no entry or reached route leads to, so only "
            "the model's read_skill can go there. Reach the island from an entry, or add "
            "on_tool_return/on_tool_status/guard/when to the bare route.")


def _unreached(graph: SkillGraph) -> list[GraphProblem]:
    reached = _reached(graph)
    bare_in = {r.to for r in graph.routes if not r.deterministic}
    found: list[GraphProblem] = []
    for sid in graph.skill_ids:
        if sid in reached:
            continue
        sources = list(dict.fromkeys(
            r.from_skill for r in graph.routes if r.to == sid and r.deterministic
            and r.from_skill != sid))
        if sid in bare_in:  # the reference's precedence: a bare edge in is model-edge-only
            found.append(_warning("model-edge-only", _model_edge_message(sid, sources),
                                  skill=sid))
        elif sources:
            found.append(_warning("unreachable-skill", _island_message(sid, sources),
                                  skill=sid, from_skill=sources[0]))
        else:
            found.append(_warning(
                "unreachable-skill",
                f"skill {sid!r} is not reached from any entry by declared routes and no "
                "route leads to it; it is only readable as an open skill. Add an entry "
                "or a route to it if it belongs to the flow.",
                skill=sid,
            ))
    return found


def _entry_fanout(graph: SkillGraph) -> list[GraphProblem]:
    entries = graph.entries
    if graph.is_exclusive or len(entries) < 2:
        return []
    first_default = next((i for i, e in enumerate(entries) if not e.conditional), None)
    if first_default is None:
        return []
    found = [_warning(
        "multi-entry-fanout",
        f"{len(entries)} entries and {entries[first_default].skill_id!r} is unconditional, "
        "so it stays co-active beside whichever entry wins: give every entry a "
        "condition, or use an entry router (.classify / .entry_by / .entry_by_read).",
        skill=entries[first_default].skill_id,
    )]
    ins = {r.to for r in graph.routes if r.deterministic}
    outs = {r.from_skill for r in graph.routes if r.deterministic}
    for e in entries[first_default + 1:]:
        if e.skill_id in outs and e.skill_id not in ins:
            found.append(_warning(
                "dead-entry-step",
                f"entry {e.skill_id!r} comes after the unconditional entry "
                f"{entries[first_default].skill_id!r}, which always wins the cold start, "
                "and no route leads in, so its outgoing routes never fire: move it before "
                "the unconditional entry or route to it.",
                skill=e.skill_id,
            ))
    return found


def _ambiguous_routes(graph: SkillGraph) -> list[GraphProblem]:
    by_source: dict[str, list[Route]] = {}
    for r in graph.routes:
        if r.deterministic:
            by_source.setdefault(r.from_skill, []).append(r)
    return [
        _warning(
            "ambiguous-routes",
            f"{len(rs)} deterministic routes leave {src!r} "
            f"(to {', '.join(r.to for r in rs)}); when several match one batch the first "
            "declared wins and the rest are recorded as a route_conflict. Make their "
            "conditions disjoint or order them deliberately.",
            skill=src,
        )
        for src, rs in by_source.items()
        if len(rs) >= 2
    ]


def _self_loops(graph: SkillGraph) -> list[GraphProblem]:
    return [
        _warning(
            "self-loop",
            f"route {r.from_skill} -> {r.to} points back at its own source; the cursor "
            "already stays put when nothing fires. Remove it or retarget it.",
            skill=r.from_skill, from_skill=r.from_skill, to=r.to,
        )
        for r in graph.routes
        if r.from_skill == r.to
    ]


def _normalise(text: str) -> str:
    return " ".join(text.strip().lower().split())


def _intent_examples(graph: SkillGraph) -> Sequence[tuple[str, str, str]]:
    from footprint.graph._matchers import Intent

    rows: list[tuple[str, str, str]] = []
    for e in graph.entries:
        if isinstance(e.match, Intent):
            for ex in (*e.match.examples, *e.examples):
                rows.append((e.skill_id, e.match.intent, ex))
    return rows


def _duplicate_intent_examples(graph: SkillGraph) -> list[GraphProblem]:
    first: dict[str, tuple[str, str]] = {}
    found: list[GraphProblem] = []
    for sid, intent, ex in _intent_examples(graph):
        key = _normalise(ex)
        seen = first.setdefault(key, (sid, intent))
        if seen[1] != intent:
            found.append(_warning(
                "duplicate-intent-example",
                f"example {ex!r} is listed under intent {seen[1]!r} ({seen[0]!r}) and "
                f"under intent {intent!r} ({sid!r}); the classifier cannot tell them apart "
                "on it. Keep it under one intent.",
                skill=sid, example=ex,
            ))
    return found
