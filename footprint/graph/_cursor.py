"""The cursor resolver: ``explain_next_skill(ctx) -> CursorMove`` (spec §2.5).

Resolution order: the turn verdict (iteration 1), the cold start walk,
declared edges over the tool batch (D1), an accepted tool proposal (D1.5),
the model's accepted pick (D2), else stay. A hidden skill is never a
landing place on any path. A predicate or matcher that raises counts as no
match for that rule only; nothing here raises for any context.

The resolver keeps ONE slot of memo (the last ctx object and its move), so
compiled triggers evaluated against the same ctx all see one cursor. That
state lives on the resolver instance, never at module level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from footprint.events import Conflict, ConflictItem, CursorMove, GuardRecord, MoveBy
from footprint.graph._declare import Entry, Route
from footprint.graph._guards import Hop
from footprint.injection import InjectionContext, ToolResult, tool_results_of

__all__ = ["CursorResolver", "entry_hit"]



def _turn_by(by: str) -> MoveBy:
    """The turn verdict's ``by`` as a cursor move: intent, continuity, decider, else entry."""
    if by == "intent":
        return "intent"
    if by == "continuity":
        return "continuity"
    if by == "decider":
        return "decider"
    return "entry"


@dataclass(frozen=True, slots=True)
class EntryHit:
    """A conditional entry that held: its witness and keyword, when a matcher won."""

    witness: str | None = None
    keyword: str | None = None


def entry_hit(entry: Entry, ctx: InjectionContext) -> EntryHit | None:
    """Judge one conditional entry against ``ctx`` (raises propagate to the caller)."""
    if entry.matcher is not None:
        hit = entry.matcher.search(ctx.user_message)
        return None if hit is None else EntryHit(hit.witness, hit.keyword)
    if entry.when is not None:
        return EntryHit() if entry.when(ctx) else None
    return EntryHit()


def _name_matches(route: Route, res: ToolResult) -> bool:
    pattern = route.on_tool_return
    if pattern is None:
        return True
    if isinstance(pattern, str):
        return res.tool_name == pattern
    return pattern.search(res.tool_name) is not None


def _preconditions(route: Route, res: ToolResult) -> bool:
    statuses = route.on_tool_status
    if statuses is not None and (res.status is None or res.status not in statuses):
        return False
    return _name_matches(route, res)


@dataclass(slots=True)
class _Scan:
    """What D1 found over one batch."""

    winner: tuple[ToolResult, Route, GuardRecord | None] | None = None
    losers: list[ConflictItem] = field(default_factory=list)
    closed: dict[int, GuardRecord] = field(default_factory=dict)


class CursorResolver:
    """The pure resolver behind ``SkillGraph.explain_next_skill``."""

    __slots__ = ("_entries", "_entry_ids", "_memo", "_routes_from", "_walk_entries")

    def __init__(
        self,
        entries: Sequence[Entry],
        routes_from: Mapping[str, tuple[Route, ...]],
        *,
        walk_entries: bool,
    ) -> None:
        self._entries = tuple(entries)
        self._entry_ids = frozenset(e.skill_id for e in entries)
        self._routes_from = routes_from
        self._walk_entries = walk_entries
        self._memo: tuple[InjectionContext, CursorMove] | None = None

    def explain(self, ctx: InjectionContext) -> CursorMove:
        """The move for ``ctx``; the same ctx object gets the same answer without re-running."""
        memo = self._memo
        if memo is not None and memo[0] is ctx:
            return memo[1]
        try:
            move = self._resolve(ctx)
        except Exception:  # a malformed ctx must not break a run: stay put
            move = CursorMove(by="none", from_skill=_safe_cursor(ctx))
        self._memo = (ctx, move)
        return move

    def superseded(self, ctx: InjectionContext) -> tuple[str, ...]:
        """Conditional entries other than ``to`` whose condition passes while ``to`` is set."""
        to = self.explain(ctx).to
        if to is None or self._walk_entries is False:
            return ()
        hidden = frozenset(ctx.hidden_skill_ids or ())
        out: list[str] = []
        for entry in self._entries:
            if not entry.conditional or entry.skill_id in (to, *out) or entry.skill_id in hidden:
                continue
            try:
                if entry_hit(entry, ctx) is not None:
                    out.append(entry.skill_id)
            except Exception:  # the evaluator reports raises; here they are ignored
                continue
        return tuple(out)

    # ── resolution ────────────────────────────────────────────────────────

    def _resolve(self, ctx: InjectionContext) -> CursorMove:
        hidden = frozenset(ctx.hidden_skill_ids or ())
        turn = ctx.turn_route
        if (
            ctx.iteration == 1 and turn is not None and turn.to is not None
            and turn.to not in hidden
        ):
            return CursorMove(
                by=_turn_by(turn.by), from_skill=turn.from_skill, to=turn.to,
                witness=turn.witness,
            )
        cur = ctx.current_skill_id
        if cur is None:
            return self._cold(ctx, hidden)
        return self._warm(ctx, cur, hidden)

    def _cold(self, ctx: InjectionContext, hidden: frozenset[str]) -> CursorMove:
        if self._walk_entries and ctx.turn_route is None:
            for entry in self._entries:
                if entry.skill_id in hidden:
                    continue
                try:
                    hit = entry_hit(entry, ctx)
                except Exception:  # a raising condition is no match
                    continue
                if hit is not None:
                    return CursorMove(
                        by="entry", to=entry.skill_id, witness=hit.witness, keyword=hit.keyword
                    )
        proposal = ctx.pending_tool_transition
        if proposal in self._entry_ids and proposal not in hidden:
            return CursorMove(by="tool-proposal", to=proposal)
        pick = ctx.pending_skill_pick
        if pick in self._entry_ids and pick not in hidden:
            return CursorMove(by="model-pick", to=pick)
        activated = set(ctx.activated_injection_ids)
        for entry in self._entries:
            if entry.skill_id in activated and entry.skill_id not in hidden:
                return CursorMove(by="model-pick", to=entry.skill_id)
        return CursorMove(by="none")

    def _warm(self, ctx: InjectionContext, cur: str, hidden: frozenset[str]) -> CursorMove:
        routes = self._routes_from.get(cur, ())
        scan = self._scan(ctx, cur, routes, hidden) if routes else _Scan()
        closed = tuple(scan.closed[i] for i in sorted(scan.closed))
        if scan.winner is not None:
            res, route, record = scan.winner
            conflict = None
            if scan.losers:
                winner = ConflictItem(
                    tool_name=res.tool_name, target=route.to, tool_call_id=res.tool_call_id
                )
                conflict = Conflict(winner=winner, losers=tuple(scan.losers))
            return CursorMove(
                by="route", from_skill=cur, to=route.to, guard=record,
                guards_closed=closed, conflict=conflict,
            )
        proposal = ctx.pending_tool_transition
        if proposal is not None and proposal != cur and proposal not in hidden:
            return CursorMove(by="tool-proposal", from_skill=cur, to=proposal, guards_closed=closed)
        pick = ctx.pending_skill_pick
        if pick is not None and pick != cur and pick not in hidden:
            return CursorMove(by="model-pick", from_skill=cur, to=pick, guards_closed=closed)
        if cur in hidden:  # the cursor never rests on a skill the caller may not see
            return CursorMove(by="none", from_skill=cur, guards_closed=closed)
        return CursorMove(by="stay", from_skill=cur, to=cur, guards_closed=closed)

    def _scan(
        self, ctx: InjectionContext, cur: str, routes: tuple[Route, ...], hidden: frozenset[str]
    ) -> _Scan:
        scan = _Scan()
        for res in tool_results_of(ctx):
            hit = _first_edge(ctx, cur, res, routes, hidden, scan.closed)
            if hit is None:
                continue
            route, record = hit
            if scan.winner is None:
                scan.winner = (res, route, record)
            elif route.to != scan.winner[1].to:
                scan.losers.append(
                    ConflictItem(tool_name=res.tool_name, target=route.to,
                                 tool_call_id=res.tool_call_id)
                )
        return scan


def _first_edge(
    ctx: InjectionContext,
    cur: str,
    res: ToolResult,
    routes: tuple[Route, ...],
    hidden: frozenset[str],
    closed: dict[int, GuardRecord],
) -> tuple[Route, GuardRecord | None] | None:
    """The first edge (declaration order) this one result fires; guard failures go to ``closed``."""
    for i, route in enumerate(routes):
        if route.to in hidden:
            continue
        try:
            if not _preconditions(route, res):
                continue
            guard = route.compiled_guard
            if guard is not None:
                hop = Hop(
                    tool_name=res.tool_name, result=res.result, status=res.status,
                    iteration=ctx.iteration, user_message=ctx.user_message,
                    current_skill_id=cur,
                )
                evidence = guard.evaluate(hop)
                record = GuardRecord(
                    from_skill=cur, to=route.to, tool_name=res.tool_name,
                    verdict=evidence.verdict, conditions=evidence.conditions,
                    tool_call_id=res.tool_call_id,
                )
                if evidence.verdict:
                    return route, record
                closed.setdefault(i, record)
                continue
            if route.on_tool_return is not None or route.on_tool_status is not None:
                return route, None
            if route.when is not None and route.when(res):
                return route, None
        except Exception:  # a raise is a no-match for this (edge, result) pair only
            continue
    return None


def _safe_cursor(ctx: object) -> str | None:
    cur = getattr(ctx, "current_skill_id", None)
    return cur if isinstance(cur, str) else None
