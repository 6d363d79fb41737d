"""The skill graph as declared data: entries, routes, the entry router, the built graph.

Everything here is frozen. The builder (``_builder.py``) collects
declarations, ``_compile.py`` validates and compiles them into a
:class:`SkillGraph`, and the graph answers questions by delegating to the
pure resolver (``_cursor.py``) and reachability index (``_reach.py``).

Field names other modules read:

- ``Entry.match`` is the declared matcher, ``Entry.matcher`` its compiled
  form (set at build); ``Route.guard`` the declared guard mapping,
  ``Route.compiled_guard`` its compiled form (set at build).
- ``SkillGraph.declared_skills`` are the skills as passed in,
  ``SkillGraph.skills`` the compiled ones (graph triggers and
  ``metadata["skill_graph"]`` provenance) the host evaluates instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from footprint._errors import ConfigError, did_you_mean
from footprint.events import CursorMove
from footprint.graph._guards import CompiledGuard
from footprint.graph._matchers import CompiledMatcher, Intent, Matcher
from footprint.graph._routing import RoutingPolicy, Scorer
from footprint.injection import Injection, InjectionContext, ToolResult, ToolStatus

if TYPE_CHECKING:
    from footprint.graph._builder import SkillGraphBuilder
    from footprint.graph._cursor import CursorResolver
    from footprint.graph._problems import Checkup
    from footprint.graph._reach import GraphIndex

__all__ = [
    "CheckMode",
    "EdgeKind",
    "Entry",
    "EntryRouter",
    "EntryWhen",
    "GraphEdge",
    "Provenance",
    "Route",
    "RouteWhen",
    "RouterKind",
    "SkillGraph",
]

EntryWhen: TypeAlias = Callable[[InjectionContext], object]
RouteWhen: TypeAlias = Callable[[ToolResult], object]
CheckMode: TypeAlias = Literal["throw", "warn", "off"]
EdgeKind: TypeAlias = Literal[
    "entry", "on-tool-status", "on-tool-return", "guard", "predicate", "model"
]
RouterKind: TypeAlias = Literal["classify", "entry-by", "entry-by-read"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """A way into the graph from START: unconditional, a ``when(ctx)``, or a data matcher."""

    skill_id: str
    when: EntryWhen | None = None
    match: Matcher | None = None
    examples: tuple[str, ...] = ()
    label: str | None = None
    matcher: CompiledMatcher | None = field(default=None, compare=False)

    @property
    def conditional(self) -> bool:
        """True when the entry has a condition (``when`` or ``match``)."""
        return self.when is not None or self.match is not None

    @property
    def is_intent(self) -> bool:
        """True for an intent entry: only the classifier judges it."""
        return isinstance(self.match, Intent)


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """An edge ``from_skill -> to``; deterministic unless it is bare (a model edge).

    ``when(res)`` receives the :class:`ToolResult` of one hop.
    ``on_tool_return``, ``on_tool_status`` and ``guard`` compose; ``when``
    stands alone.
    """

    from_skill: str
    to: str
    when: RouteWhen | None = None
    on_tool_return: str | re.Pattern[str] | None = None
    on_tool_status: tuple[ToolStatus, ...] | None = None
    guard: Mapping[str, Mapping[str, object]] | None = None
    label: str | None = None
    compiled_guard: CompiledGuard | None = field(default=None, compare=False)

    @property
    def deterministic(self) -> bool:
        """A bare ``route(a, b)`` is a model edge and never fires by itself."""
        return (
            self.when is not None
            or self.on_tool_return is not None
            or self.on_tool_status is not None
            or self.guard is not None
        )

    @property
    def kind(self) -> EdgeKind:
        """The first that applies: on-tool-status, on-tool-return, guard, predicate, model."""
        if self.on_tool_status is not None:
            return "on-tool-status"
        if self.on_tool_return is not None:
            return "on-tool-return"
        if self.guard is not None:
            return "guard"
        if self.when is not None:
            return "predicate"
        return "model"


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryRouter:
    """The one entry router a graph may have; all three make entries exclusive."""

    kind: RouterKind
    scorer: Scorer | None = None
    policy: RoutingPolicy = field(default_factory=RoutingPolicy)


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphEdge:
    """One edge as the graph declares it (``from_skill`` None is START)."""

    from_skill: str | None
    to: str
    kind: EdgeKind
    label: str | None = None
    match: CompiledMatcher | None = None
    guard: CompiledGuard | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """``metadata["skill_graph"]`` on a compiled skill: how the graph admits it.

    ``match`` is the entry matcher's caption, ``guard`` the first
    deterministic incoming edge's guard caption.
    """

    via: Literal["entry", "route", "model"]
    from_skill: str | None = None
    label: str | None = None
    match: str | None = None
    trigger_kind: Literal["on-tool-return", "rule"] | None = None
    guard: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillGraph:
    """A built, validated, compiled flat skill graph. Immutable; build with the builder.

    The resolver keeps a one-slot memo (last ctx object -> its move) so the
    compiled triggers and the host agree on one cursor per ctx; from the
    outside every method is a pure function of its arguments.
    """

    declared_skills: tuple[Injection, ...]
    skills: tuple[Injection, ...]
    entries: tuple[Entry, ...]
    routes: tuple[Route, ...]
    router: EntryRouter | None = None
    never_routes: tuple[str, ...] = ()
    check: CheckMode = "throw"
    known_tools: tuple[str, ...] | None = None
    index: GraphIndex = field(compare=False, repr=False)
    resolver: CursorResolver = field(compare=False, repr=False)

    # ── construction ──────────────────────────────────────────────────────

    @staticmethod
    def builder(skills: Iterable[Injection] = ()) -> SkillGraphBuilder:
        """Start a fluent declaration over ``skills``."""
        from footprint.graph._builder import SkillGraphBuilder

        return SkillGraphBuilder(skills)

    @staticmethod
    def from_spec(
        *,
        skills: Sequence[Injection],
        start: object = None,
        steps: Sequence[Mapping[str, Any]] = (),
        never_routes: Sequence[str] = (),
        check: CheckMode = "throw",
        known_tools: Iterable[str] | None = None,
    ) -> SkillGraph:
        """The object form; ``start`` is an id, ``{"use"}``, ``{"rules"}`` or ``{"entries"}``."""
        from footprint.graph._builder import graph_from_spec

        return graph_from_spec(
            skills=skills, start=start, steps=steps, never_routes=never_routes,
            check=check, known_tools=known_tools,
        )

    # ── shape ─────────────────────────────────────────────────────────────

    @property
    def skill_ids(self) -> tuple[str, ...]:
        return self.index.skill_ids

    @property
    def entry_ids(self) -> tuple[str, ...]:
        return self.index.entry_ids

    @property
    def is_exclusive(self) -> bool:
        """Entries are exclusive under any entry router (classify, entry_by, entry_by_read)."""
        return self.router is not None

    @property
    def classifier(self) -> Scorer | None:
        """The ``classify`` scorer, when the graph runs the turn cascade."""
        r = self.router
        return r.scorer if r is not None and r.kind == "classify" else None

    def skill(self, skill_id: str) -> Injection:
        """The compiled skill ``skill_id``; an unknown id is a :class:`ConfigError`."""
        found = self.index.by_id.get(skill_id)
        if found is None:
            raise ConfigError(
                f"skill {skill_id!r} is not in this graph; known skills: "
                f"{', '.join(self.skill_ids)}{did_you_mean(skill_id, self.skill_ids)}"
            )
        return self.skills[found]

    def edges(self) -> tuple[GraphEdge, ...]:
        """Entry edges (from START) in declaration order, then the routes."""
        return self.index.edges

    # ── the cursor ────────────────────────────────────────────────────────

    def explain_next_skill(self, ctx: InjectionContext) -> CursorMove:
        """Where the cursor goes this iteration, by which rule, with its evidence."""
        return self.resolver.explain(ctx)

    def next_skill(self, ctx: InjectionContext) -> str | None:
        """``explain_next_skill(ctx).to`` (memoised on ctx identity)."""
        return self.resolver.explain(ctx).to

    def superseded_entries(self, ctx: InjectionContext) -> tuple[str, ...]:
        """Conditional entries other than the cursor whose condition still holds."""
        return self.resolver.superseded(ctx)

    def reachable_skills(
        self, cursor: str | None, hidden: Iterable[str] = ()
    ) -> tuple[str, ...]:
        """Hops from ``cursor`` (edge targets, then entries), minus the cursor and hidden ids."""
        return self.index.reachable(cursor, frozenset(hidden))

    def open_skills(self, hidden: Iterable[str] = ()) -> tuple[str, ...]:
        """llm-activated skills no edge leads to: readable from anywhere, never move the cursor."""
        gone = frozenset(hidden)
        return tuple(s for s in self.index.open_ids if s not in gone)

    # ── periphery ─────────────────────────────────────────────────────────

    def checkup(self, known_tools: Iterable[str] | None = None) -> Checkup:
        """The static check-up (§2.10); see ``footprint.graph._checkup``."""
        from footprint.graph._checkup import checkup

        tools = tuple(known_tools) if known_tools is not None else self.known_tools
        return checkup(self, tools)

    def to_mermaid(self) -> str:
        """The graph as a Mermaid flowchart (§2.11)."""
        from footprint.graph._mermaid import to_mermaid

        return to_mermaid(self)
