"""Compilation of a flat skill graph (spec §2.1 build refusals, §2.4 triggers and provenance).

``compile_graph`` takes the collected declarations, refuses every mistake
the spec lists as a :class:`ConfigError` naming the rule and the fix,
compiles matchers and guards, gives each skill its graph trigger and
provenance, and runs the check-up per the ``check`` mode.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from footprint._errors import ConfigError, did_you_mean
from footprint.graph._cursor import CursorResolver, entry_hit
from footprint.graph._declare import (
    CheckMode,
    Entry,
    EntryRouter,
    GraphEdge,
    Provenance,
    Route,
    SkillGraph,
)
from footprint.graph._guards import compile_guard
from footprint.graph._matchers import compile_matcher
from footprint.graph._reach import build_index
from footprint.injection import Always, Injection, InjectionContext, Rule, Trigger

__all__ = ["GraphDeclaration", "compile_graph", "normalise_row"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphDeclaration:
    """Everything a builder collected, before validation."""

    skills: tuple[Injection, ...]
    entries: tuple[Entry, ...]
    routes: tuple[Route, ...]
    router: EntryRouter | None = None
    never_routes: tuple[str, ...] = ()
    check: CheckMode = "throw"
    known_tools: tuple[str, ...] | None = None


def normalise_row(text: str) -> str:
    """Trim, lower-case and collapse whitespace (how examples are compared)."""
    return " ".join(text.lower().split())


def compile_graph(decl: GraphDeclaration) -> SkillGraph:
    """Validate ``decl`` and build the :class:`SkillGraph` (check-up per ``decl.check``)."""
    if decl.check not in ("throw", "warn", "off"):
        raise ConfigError(
            f"build(check={decl.check!r}) is not a check mode; use 'throw', 'warn' or 'off'"
        )
    ids = tuple(s.id for s in decl.skills)
    entries = tuple(_compile_entry(e, ids, decl.router) for e in decl.entries)
    routes = tuple(_compile_route(r, ids) for r in decl.routes)
    _check_rows("never_routes", decl.never_routes, "the graph")
    edges = tuple(_entry_edge(e) for e in entries) + tuple(_route_edge(r) for r in routes)
    index = build_index(decl.skills, entries, routes, edges)
    walk = decl.router is None or decl.router.kind == "entry-by"
    resolver = CursorResolver(entries, index.deterministic_from, walk_entries=walk)
    compiled = tuple(
        _compile_skill(s, entries, routes, decl.router is not None, resolver)
        for s in decl.skills
    )
    graph = SkillGraph(
        declared_skills=decl.skills, skills=compiled, entries=entries, routes=routes,
        router=decl.router, never_routes=decl.never_routes, check=decl.check,
        known_tools=decl.known_tools, index=index, resolver=resolver,
    )
    _run_checkup(graph, decl.check)
    return graph


# ── validation ──────────────────────────────────────────────────────────────


def _known(skill_id: str, ids: Sequence[str], where: str) -> None:
    if skill_id not in ids:
        raise ConfigError(
            f"{where} names unknown skill {skill_id!r}{did_you_mean(skill_id, ids)}; "
            f"declare it in the graph's skills (known: {', '.join(ids) or 'none'})"
        )


def _check_rows(what: str, rows: Sequence[str], where: str) -> None:
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, str) or not row.strip():
            raise ConfigError(
                f"{where}: {what}[{i}] = {row!r} is not a non-empty string; "
                f"write the phrase as text or drop the row"
            )
        key = normalise_row(row)
        if key in seen:
            raise ConfigError(
                f"{where}: {what}[{i}] = {row!r} repeats an earlier row; drop the duplicate"
            )
        seen.add(key)


def _compile_entry(entry: Entry, ids: Sequence[str], router: EntryRouter | None) -> Entry:
    where = f"entry {entry.skill_id!r}"
    _known(entry.skill_id, ids, where)
    if entry.when is not None and entry.match is not None:
        raise ConfigError(
            f"{where} has both when= and match=; give one condition (a predicate or a matcher)"
        )
    if entry.is_intent and (router is None or router.kind != "classify"):
        raise ConfigError(
            f"{where} uses an Intent matcher but the graph has no classifier "
            f"(intent-without-classify); add .classify(scorer) or use a Regex/Keywords matcher"
        )
    _check_rows("examples", entry.examples, where)
    if entry.match is None:
        return entry
    return replace(entry, matcher=compile_matcher(entry.match, where=where))


def _compile_route(route: Route, ids: Sequence[str]) -> Route:
    where = f"route {route.from_skill!r} -> {route.to!r}"
    _known(route.from_skill, ids, where)
    _known(route.to, ids, where)
    if route.when is not None and (
        route.on_tool_return is not None
        or route.on_tool_status is not None
        or route.guard is not None
    ):
        raise ConfigError(
            f"{where} combines when= with on_tool_return/on_tool_status/guard; "
            f"use when= alone, or express the condition as a guard"
        )
    if route.on_tool_status is not None and len(route.on_tool_status) == 0:
        raise ConfigError(
            f"{where} has on_tool_status=() which can never match; "
            f"list at least one status or drop the argument"
        )
    pattern = route.on_tool_return
    if pattern is not None and not isinstance(pattern, str | re.Pattern):
        raise ConfigError(
            f"{where}: on_tool_return={pattern!r} is neither a tool name nor a compiled "
            f"pattern; pass a str or re.compile(...)"
        )
    if route.guard is None:
        return route
    return replace(route, compiled_guard=compile_guard(route.guard, where=where))


def _run_checkup(graph: SkillGraph, check: CheckMode) -> None:
    if check == "off":
        return
    report = graph.checkup()
    errors = [p for p in report.problems if p.kind == "error"]
    if check == "throw" and errors:
        listing = "; ".join(f"[{p.code}] {p.message.rstrip('.')}" for p in errors)
        raise ConfigError(
            f"skill graph check-up found {len(errors)} error(s): {listing}. "
            f"Fix them, or build(check='warn') to only warn"
        )
    if check == "warn" and report.problems:
        listing = "; ".join(f"[{p.code}] {p.message.rstrip('.')}" for p in report.problems)
        warnings.warn(f"skill graph check-up: {listing}", UserWarning, stacklevel=4)


# ── edges ───────────────────────────────────────────────────────────────────


def _entry_edge(entry: Entry) -> GraphEdge:
    return GraphEdge(
        from_skill=None, to=entry.skill_id, kind="entry", label=entry.label, match=entry.matcher
    )


def _tool_text(pattern: str | re.Pattern[str] | None) -> str | None:
    if pattern is None:
        return None
    return pattern if isinstance(pattern, str) else f"/{pattern.pattern}/"


def derived_label(route: Route) -> str | None:
    """``on [<tool> ]status=a|b[ when <guard>]`` or ``on <tool>[ when <guard>]``."""
    guard = route.compiled_guard
    tail = f" when {guard.caption()}" if guard is not None else ""
    tool = _tool_text(route.on_tool_return)
    if route.on_tool_status is not None:
        head = f"on {tool} " if tool else "on "
        return f"{head}status={'|'.join(route.on_tool_status)}{tail}"
    if tool is not None:
        return f"on {tool}{tail}"
    return None


def _route_edge(route: Route) -> GraphEdge:
    return GraphEdge(
        from_skill=route.from_skill, to=route.to, kind=route.kind,
        label=route.label if route.label is not None else derived_label(route),
        guard=route.compiled_guard,
    )


# ── triggers and provenance ─────────────────────────────────────────────────


def _cursor_is(resolver: CursorResolver, skill_id: str) -> Rule:
    def active_when(ctx: InjectionContext) -> bool:
        return resolver.explain(ctx).to == skill_id

    return Rule(active_when=active_when)


def _conditional_entry(resolver: CursorResolver, entry: Entry) -> Rule:
    def active_when(ctx: InjectionContext) -> bool:
        own = entry_hit(entry, ctx) is not None  # a raise surfaces as predicate-threw
        to = resolver.explain(ctx).to
        if to is not None:
            return to == entry.skill_id
        return own

    return Rule(active_when=active_when)


def _trigger_for(
    skill: Injection,
    entry: Entry | None,
    incoming: Route | None,
    exclusive: bool,
    resolver: CursorResolver,
) -> Trigger:
    if entry is not None:
        if exclusive:
            return _cursor_is(resolver, skill.id)
        if not entry.conditional:
            return Always()
        return _conditional_entry(resolver, entry)
    if incoming is not None:
        return _cursor_is(resolver, skill.id)
    return skill.trigger


def _provenance(entry: Entry | None, incoming: Route | None) -> Provenance:
    if entry is not None:
        caption = entry.matcher.caption() if entry.matcher is not None else None
        return Provenance(via="entry", label=entry.label, match=caption)
    if incoming is not None:
        only_name = incoming.on_tool_return is not None and incoming.on_tool_status is None
        guard = incoming.compiled_guard
        return Provenance(
            via="route", from_skill=incoming.from_skill, label=incoming.label,
            trigger_kind="on-tool-return" if only_name else "rule",
            guard=guard.caption() if guard is not None else None,
        )
    return Provenance(via="model")


def _compile_skill(
    skill: Injection,
    entries: Sequence[Entry],
    routes: Sequence[Route],
    exclusive: bool,
    resolver: CursorResolver,
) -> Injection:
    entry = next((e for e in entries if e.skill_id == skill.id), None)
    incoming = next((r for r in routes if r.to == skill.id and r.deterministic), None)
    trigger = _trigger_for(skill, entry, incoming, exclusive, resolver)
    metadata = MappingProxyType(
        {**skill.metadata, "skill_graph": _provenance(entry, incoming)}
    )
    return replace(skill, trigger=trigger, metadata=metadata)
