"""Declaring a flat skill graph: the fluent builder and the object form (spec §2.1).

Fluent::

    graph = (
        skill_graph(triage, refund, billing)
        .entry(triage)
        .route(triage, refund, on_tool_return="lookup", guard={"risk": {"gte": "high"}})
        .build()
    )

Object form::

    SkillGraph.from_spec(skills=[triage, refund], start="triage",
                         steps=[{"from": "triage", "to": "refund", "on_tool_return": "lookup"}])
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from footprint._errors import ConfigError, did_you_mean
from footprint.graph._builder_checks import (
    check_check_mode,
    check_entry,
    check_label,
    check_phrases,
    check_policy,
    check_ref,
    check_route,
    check_scorer,
    check_tool_names,
)
from footprint.graph._compile import GraphDeclaration, compile_graph
from footprint.graph._declare import (
    CheckMode,
    Entry,
    EntryRouter,
    EntryWhen,
    Route,
    RouteWhen,
    SkillGraph,
)
from footprint.graph._matchers import Matcher
from footprint.graph._routing import RoutingPolicy, Scorer
from footprint.injection import TOOL_STATUSES, Injection, ToolStatus

__all__ = ["SkillGraphBuilder", "graph_from_spec", "skill_graph"]

SkillRef = Injection | str


def _statuses(value: object, where: str) -> tuple[ToolStatus, ...] | None:
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, Sequence):
        raise ConfigError(
            f"{where}: on_tool_status={value!r} is not a status or a list of statuses; "
            f"use values from {', '.join(TOOL_STATUSES)}"
        )
    out: list[ToolStatus] = []
    for item in items:
        if item not in TOOL_STATUSES:
            raise ConfigError(
                f"{where}: on_tool_status value {item!r} is not a result status"
                f"{did_you_mean(str(item), TOOL_STATUSES)}; use one of {', '.join(TOOL_STATUSES)}"
            )
        out.append(item)
    return tuple(out)


class SkillGraphBuilder:
    """Collects entries, routes and one entry router; ``build()`` validates and compiles."""

    __slots__ = ("_entries", "_never", "_router", "_routes", "_skills")

    def __init__(self, skills: Iterable[Injection] = ()) -> None:
        self._skills: dict[str, Injection] = {}
        self._entries: list[Entry] = []
        self._routes: list[Route] = []
        self._router: EntryRouter | None = None
        self._never: tuple[str, ...] = ()
        for skill in skills:
            self._register(skill)

    def _register(self, skill: object) -> str:
        if not isinstance(skill, Injection):
            raise ConfigError(
                f"skill_graph() takes skill Injections, got {skill!r}; "
                f"build one with define_skill(...)"
            )
        if skill.flavor != "skill":
            raise ConfigError(
                f"{skill.id!r} has flavor {skill.flavor!r}, not 'skill'; a skill graph holds "
                f"skills only — use define_skill(...) or keep it outside the graph"
            )
        known = self._skills.get(skill.id)
        if known is not None and known is not skill and known != skill:
            raise ConfigError(
                f"two different skills share the id {skill.id!r}; give each a unique id "
                f"or pass the same object"
            )
        self._skills.setdefault(skill.id, skill)
        return skill.id

    def _ref(self, skill: SkillRef, where: str = "route()") -> str:
        check_ref(where, skill)
        return skill if isinstance(skill, str) else self._register(skill)

    def entry(
        self,
        skill: SkillRef,
        when: EntryWhen | None = None,
        match: Matcher | None = None,
        examples: Iterable[str] = (),
        label: str | None = None,
    ) -> SkillGraphBuilder:
        """A way in from START: unconditional, ``when(ctx)``, or a data ``match``."""
        skill_id = self._ref(skill, "entry()")
        if when is not None and match is not None:
            raise ConfigError(
                f"entry {skill_id!r} has both when= and match=; give one condition"
            )
        items = check_entry(skill_id, when, match, examples)
        check_label(f"entry({skill_id!r})", label)
        self._entries.append(
            Entry(skill_id=skill_id, when=when, match=match, examples=items, label=label)
        )
        return self

    def route(
        self,
        from_skill: SkillRef,
        to_skill: SkillRef,
        when: RouteWhen | None = None,
        on_tool_return: str | re.Pattern[str] | None = None,
        on_tool_status: ToolStatus | Sequence[ToolStatus] | None = None,
        guard: Mapping[str, Mapping[str, object]] | None = None,
        label: str | None = None,
    ) -> SkillGraphBuilder:
        """An edge; bare (no condition) it is a model edge that only a pick can take."""
        src = self._ref(from_skill, "route(from_skill)")
        dst = self._ref(to_skill, "route(to_skill)")
        where = f"route {src!r} -> {dst!r}"
        check_route(where, when, on_tool_return, guard)
        check_label(where, label)
        self._routes.append(
            Route(from_skill=src, to=dst, when=when, on_tool_return=on_tool_return,
                  on_tool_status=_statuses(on_tool_status, where), guard=guard, label=label)
        )
        return self

    def never_routes(self, phrases: Iterable[str]) -> SkillGraphBuilder:
        """Phrases no rule may claim (checked by the check-up)."""
        self._never = self._never + check_phrases("never_routes()", phrases)
        return self

    def _set_router(self, router: EntryRouter) -> SkillGraphBuilder:
        if self._router is not None:
            raise ConfigError(
                f"the graph already has the entry router {self._router.kind!r}; "
                f"{router.kind!r} would be a second — keep one of classify, entry_by, entry_by_read"
            )
        self._router = router
        return self

    def classify(self, scorer: Scorer, policy: RoutingPolicy | None = None) -> SkillGraphBuilder:
        """Route each turn by the cascade: rules, then ``scorer`` over intents, then a menu."""
        check_scorer("classify()", scorer)
        check_policy("classify(policy=...)", policy)
        return self._set_router(
            EntryRouter(kind="classify", scorer=scorer, policy=policy or RoutingPolicy())
        )

    def entry_by(self, scorer: Scorer) -> SkillGraphBuilder:
        """Pick the entry by ``scorer`` at turn start (PickEntry)."""
        check_scorer("entry_by()", scorer)
        return self._set_router(EntryRouter(kind="entry-by", scorer=scorer))

    def entry_by_read(self) -> SkillGraphBuilder:
        """Let the model pick the entry with ``read_skill``."""
        return self._set_router(EntryRouter(kind="entry-by-read"))

    def build(
        self, check: CheckMode = "throw", known_tools: Iterable[str] | None = None
    ) -> SkillGraph:
        """Validate, compile and check the graph (``check``: throw, warn or off)."""
        check_check_mode(check)
        tools = check_tool_names("build(known_tools=...)", known_tools)
        return compile_graph(
            GraphDeclaration(
                skills=tuple(self._skills.values()), entries=tuple(self._entries),
                routes=tuple(self._routes), router=self._router,
                never_routes=self._never, check=check,
                known_tools=tools,
            )
        )


def skill_graph(*skills: Injection) -> SkillGraphBuilder:
    """Start a fluent skill graph over ``skills``."""
    return SkillGraphBuilder(skills)


# ── the object form ─────────────────────────────────────────────────────────

_STEP_KEYS = frozenset(
    {"from", "to", "when", "on_tool_return", "on_tool_status", "guard", "label"}
)
_RULE_KEYS = frozenset({"use", "when", "match", "examples", "label"})


def _apply_rules(b: SkillGraphBuilder, rules: object, ids: Sequence[str]) -> None:
    if not isinstance(rules, Sequence) or isinstance(rules, str):
        raise ConfigError(f"start['rules'] = {rules!r} is not a list of rules; pass a list")
    bad = [i for i, r in enumerate(rules) if not isinstance(r, Mapping) or r.get("use") not in ids]
    if bad:
        listing = ", ".join(
            f"index {i} {rules[i].get('use') if isinstance(rules[i], Mapping) else rules[i]!r}"
            for i in bad
        )
        raise ConfigError(
            f"rule-id-exists: start['rules'] name unknown skills ({listing}); "
            f"each rule's 'use' must be one of the known ids: {', '.join(ids)}"
        )
    for i, rule in enumerate(rules):
        extra = set(rule) - _RULE_KEYS
        if extra:
            raise ConfigError(f"start['rules'][{i}] has unknown keys {sorted(extra)}; "
                              f"allowed: {sorted(_RULE_KEYS)}")
        if (rule.get("when") is None) == (rule.get("match") is None):
            raise ConfigError(
                f"start['rules'][{i}] (use {rule['use']!r}) needs exactly one of 'when' "
                f"or 'match'; an unconditional entry is start='{rule['use']}'"
            )
        b.entry(rule["use"], when=rule.get("when"), match=rule.get("match"),
                examples=rule.get("examples", ()), label=rule.get("label"))


def _apply_start(b: SkillGraphBuilder, start: object, ids: Sequence[str]) -> None:
    if start is None:
        return
    if isinstance(start, str):
        b.entry(start)
        return
    if not isinstance(start, Mapping):
        raise ConfigError(f"start={start!r} is not an id or a mapping; see SkillGraph.from_spec")
    if "use" in start:
        b.entry(start["use"])
    elif "rules" in start:
        _apply_rules(b, start["rules"], ids)
        if start.get("classify") is not None:
            b.classify(start["classify"], start.get("routing"))
        elif start.get("routing") is not None:
            raise ConfigError(
                f"start['routing']={start['routing']!r} without start['classify']; "
                f"a routing policy only applies to a classifier — add 'classify'"
            )
    elif "entries" in start:
        for skill_id in start["entries"]:
            b.entry(skill_id)
        if start.get("scored_by") is not None:
            b.entry_by(start["scored_by"])
        else:
            b.entry_by_read()
    else:
        raise ConfigError(
            f"start={dict(start)!r} has none of 'use', 'rules' or 'entries'; pick one form"
        )


def _apply_step(b: SkillGraphBuilder, i: int, step: Mapping[str, Any]) -> None:
    extra = set(step) - _STEP_KEYS
    if extra:
        raise ConfigError(
            f"steps[{i}] has unknown keys {sorted(extra)}; allowed: {sorted(_STEP_KEYS)}"
        )
    if "from" not in step or "to" not in step:
        raise ConfigError(f"steps[{i}] = {dict(step)!r} needs both 'from' and 'to' skill ids")
    b.route(step["from"], step["to"], when=step.get("when"),
            on_tool_return=step.get("on_tool_return"), on_tool_status=step.get("on_tool_status"),
            guard=step.get("guard"), label=step.get("label"))


def graph_from_spec(
    *,
    skills: Sequence[Injection],
    start: object = None,
    steps: Sequence[Mapping[str, Any]] = (),
    never_routes: Sequence[str] = (),
    check: CheckMode = "throw",
    known_tools: Iterable[str] | None = None,
) -> SkillGraph:
    """Build a flat graph from its object form (see :meth:`SkillGraph.from_spec`)."""
    b = SkillGraphBuilder(skills)
    ids = tuple(s.id for s in skills)
    _apply_start(b, start, ids)
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise ConfigError(
                f"steps[{i}] = {step!r} is not a mapping; write {{'from': ..., 'to': ...}}"
            )
        _apply_step(b, i, step)
    b.never_routes(never_routes)
    return b.build(check=check, known_tools=known_tools)

