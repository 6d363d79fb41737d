"""Reachability: which skills a pick may name from a cursor, and which are open.

The :class:`GraphIndex` is computed once at build time: routes indexed by
their source, entry ids, open skills, the edge list. Every lookup after
that is a dict read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from footprint.graph._declare import Entry, GraphEdge, Route
from footprint.injection import Injection, LLMActivated

__all__ = ["GraphIndex", "build_index", "dedupe"]


def dedupe(ids: Sequence[str]) -> tuple[str, ...]:
    """Keep the first occurrence of each id, in order."""
    return tuple(dict.fromkeys(ids))


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphIndex:
    """Build-time lookups over one graph's declarations."""

    skill_ids: tuple[str, ...]
    by_id: Mapping[str, int]
    entry_ids: tuple[str, ...]
    targets_from: Mapping[str, tuple[str, ...]]
    deterministic_from: Mapping[str, tuple[Route, ...]]
    open_ids: tuple[str, ...]
    edges: tuple[GraphEdge, ...]

    def reachable(self, cursor: str | None, hidden: frozenset[str]) -> tuple[str, ...]:
        """No cursor: the entries. Otherwise edge targets out of ``cursor``, then entries."""
        if cursor is None:
            pool: Sequence[str] = self.entry_ids
        else:
            pool = self.targets_from.get(cursor, ()) + self.entry_ids
        return tuple(s for s in dedupe(pool) if s != cursor and s not in hidden)


def build_index(
    skills: Sequence[Injection],
    entries: Sequence[Entry],
    routes: Sequence[Route],
    edges: tuple[GraphEdge, ...],
) -> GraphIndex:
    """Index ``routes`` by source and find the open skills of the compiled ``skills``."""
    targets: dict[str, list[str]] = {}
    deterministic: dict[str, list[Route]] = {}
    for route in routes:
        targets.setdefault(route.from_skill, []).append(route.to)
        if route.deterministic:
            deterministic.setdefault(route.from_skill, []).append(route)
    led_to = {r.to for r in routes} | {e.skill_id for e in entries}
    open_ids = tuple(
        s.id for s in skills if isinstance(s.trigger, LLMActivated) and s.id not in led_to
    )
    return GraphIndex(
        skill_ids=tuple(s.id for s in skills),
        by_id={s.id: i for i, s in enumerate(skills)},
        entry_ids=dedupe([e.skill_id for e in entries]),
        targets_from={k: dedupe(v) for k, v in targets.items()},
        deterministic_from={k: tuple(v) for k, v in deterministic.items()},
        open_ids=open_ids,
        edges=edges,
    )
