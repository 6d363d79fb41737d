"""Turn routing, once per run before iteration 1 (spec §2.8): the cascade and PickEntry.

``route_turn`` runs the three tiers — a passing rule entry, the scorer's
verdict (``decide_tier2``), then an optional decider over a menu — and
returns a :class:`TurnRouting`: the data of ``skill.turn_routed`` plus the
:class:`TurnRoute` the host puts on the context. ``pick_entry`` is the
simpler PickEntry stage for ``entry_by`` graphs without the cascade. Both
are pure: the host does any model call (see :func:`apply_decider`) and
emits the event.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from footprint._errors import RunError
from footprint.events import DeciderCall, DroppedResume
from footprint.graph._cursor import entry_hit
from footprint.graph._declare import Entry, SkillGraph
from footprint.graph._matchers import Intent
from footprint.graph._routing import RoutingPolicy, Scorer, Tier2Verdict, decide_tier2
from footprint.injection import (
    EntryScore,
    Injection,
    InjectionContext,
    TurnRoute,
    define_instruction,
)

__all__ = [
    "DeciderQuery",
    "EntryPick",
    "Posture",
    "TurnBy",
    "TurnRouting",
    "apply_decider",
    "menu_outstanding",
    "pick_entry",
    "route_turn",
    "skill_menu_hint",
]

Posture: TypeAlias = Literal["rails", "guard"]
TurnBy: TypeAlias = Literal["entry", "intent", "continuity", "decider", "menu", "none"]
Decider: TypeAlias = Callable[["DeciderQuery"], str | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeciderQuery:
    """What a decider is asked: one pick among ``options`` (offered, maybe 'stay', 'none')."""

    user_message: str
    offered: tuple[str, ...]
    options: tuple[str, ...]
    stay_offered: bool
    relevance: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRouting:
    """The turn-start verdict: ``skill.turn_routed`` data plus the ``turn_route`` for the ctx.

    ``turn_route`` is None when nothing was decided (the cold walk decides).
    """

    by: TurnBy
    policy: RoutingPolicy
    from_skill: str | None = None
    to: str | None = None
    scorer: str | None = None
    scores: tuple[tuple[str, float], ...] = ()
    relevance: tuple[tuple[str, float], ...] = ()
    runner_up: tuple[str, float] | None = None
    decisive: bool | None = None
    witness: str | None = None
    offered: tuple[str, ...] | None = None
    stay_offered: bool = False
    dropped_resume: DroppedResume | None = None
    decider: DeciderCall | None = None
    turn_route: TurnRoute | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryPick:
    """PickEntry's result: the preset cursor and the ranking written to the ctx."""

    skill_id: str
    entry_scores: tuple[EntryScore, ...]
    scorer: str


def menu_outstanding(turn_route: TurnRoute | None, cursor: str | None) -> bool:
    """A menu is open while ``offered`` is set and the cursor is None or still where it was."""
    if turn_route is None or turn_route.offered is None:
        return False
    return cursor is None or cursor == turn_route.from_skill


# ── helpers ─────────────────────────────────────────────────────────────────


def _hidden(ctx: InjectionContext, resolver: Callable[[], Iterable[str]] | None,
            graph: SkillGraph) -> frozenset[str]:
    hidden = set(ctx.hidden_skill_ids or ())
    if resolver is not None:
        try:
            hidden.update(resolver())
        except Exception:  # a raising permission check hides every entry
            hidden.update(graph.entry_ids)
    return frozenset(hidden)


def _describe(graph: SkillGraph, skill_id: str) -> str:
    skill = graph.skill(skill_id)
    return skill.description or skill_id


def _intent_text(entry: Entry) -> str:
    match = entry.match
    assert isinstance(match, Intent)
    return " ".join((match.intent, *match.examples))


def _softmax(scores: Sequence[float]) -> tuple[float, ...]:
    finite = [s for s in scores if math.isfinite(s)]
    if not finite:
        return tuple(0.0 for _ in scores)
    peak = max(finite)
    weights = [math.exp(s - peak) if math.isfinite(s) else 0.0 for s in scores]
    total = sum(weights)
    return tuple(w / total for w in weights)


def _as_float(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return -math.inf


# ── tier 2 ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tier2Setup:
    scorer: Scorer
    candidates: tuple[tuple[str, str], ...]
    fixed: tuple[tuple[str, float], ...] = ()
    floor: float | None = None


def _tier2_setup(
    graph: SkillGraph, visible: Sequence[Entry], inherited: str | None
) -> _Tier2Setup | None:
    classifier = graph.classifier
    if classifier is not None:
        cands: list[tuple[str, str]] = [
            (e.skill_id, _intent_text(e)) for e in visible if e.is_intent
        ]
        if inherited is not None and inherited not in {c for c, _ in cands}:
            own = next((e for e in visible if e.skill_id == inherited and e.is_intent), None)
            text = _intent_text(own) if own is not None else _describe(graph, inherited)
            cands.append((inherited, text))
        return _Tier2Setup(scorer=classifier, candidates=tuple(cands), floor=classifier.floor)
    router = graph.router
    if router is None or router.kind != "entry-by" or router.scorer is None:
        return None
    ids = dict.fromkeys(e.skill_id for e in visible)
    fixed: tuple[tuple[str, float], ...] = ()
    if inherited is not None and inherited not in ids:
        fixed = ((inherited, 0.0),)
    scored = tuple((i, _describe(graph, i)) for i in ids if i != inherited or not fixed)
    return _Tier2Setup(scorer=router.scorer, candidates=scored, fixed=fixed)


def _score(setup: _Tier2Setup, text: str) -> tuple[tuple[str, float], ...] | None:
    """The (id, score) pairs, or None when the scorer raised."""
    try:
        raw = list(setup.scorer.score(text, setup.candidates))
    except Exception:
        return None
    if len(raw) != len(setup.candidates):
        raise RunError(
            f"scorer {setup.scorer.name!r} returned {len(raw)} score(s) for "
            f"{len(setup.candidates)} candidate(s) {[c for c, _ in setup.candidates]!r}; "
            f"return exactly one score per candidate, in order"
        )
    pairs = tuple((cid, _as_float(s)) for (cid, _), s in zip(setup.candidates, raw, strict=True))
    return pairs + setup.fixed


def _from_verdict(base: TurnRouting, v: Tier2Verdict, every: tuple[str, ...],
                  inherited: str | None) -> TurnRouting:
    common = replace(
        base, scores=v.scores, relevance=v.relevance, runner_up=v.runner_up, decisive=v.decisive
    )
    if v.kind == "move":
        return replace(common, by="intent", to=v.to)
    if v.kind == "stay":
        return replace(common, by="continuity", to=v.to)
    offered = v.offered if v.kind == "menu" else every
    return replace(common, by="menu", offered=offered, stay_offered=inherited is not None)


# ── the cascade ─────────────────────────────────────────────────────────────


def _tier1(
    base: TurnRouting, visible: Sequence[Entry], ctx: InjectionContext
) -> TurnRouting | None:
    for entry in visible:
        if not entry.conditional or entry.is_intent:
            continue
        try:
            hit = entry_hit(entry, ctx)
        except Exception:  # a raising rule does not decide the turn
            continue
        if hit is not None:
            return replace(base, by="entry", to=entry.skill_id, decisive=True, witness=hit.witness)
    return None


def route_turn(
    graph: SkillGraph,
    ctx: InjectionContext,
    *,
    inherited: str | None = None,
    posture: Posture | None = None,
    decider: Decider | None = None,
    decider_name: tuple[str, str] = ("decider", "unknown"),
    hidden_resolver: Callable[[], Iterable[str]] | None = None,
) -> TurnRouting:
    """Route the turn: tier 1 rules, tier 2 scores, tier 3 ``decider`` (provider, model names)."""
    policy = graph.router.policy if graph.router is not None else RoutingPolicy()
    classifier = graph.classifier
    if policy.floor is None and classifier is not None and classifier.floor is not None:
        policy = replace(policy, floor=classifier.floor)  # the floor the verdict used
    dropped = None
    if inherited is not None and inherited not in graph.skill_ids:
        dropped, inherited = DroppedResume(id=inherited, reason="unknown-skill"), None
    hidden = _hidden(ctx, hidden_resolver, graph)
    if inherited in hidden:
        inherited = None
    base = TurnRouting(by="none", policy=policy, from_skill=inherited, dropped_resume=dropped)
    visible = [e for e in graph.entries if e.skill_id not in hidden]
    routed = _tier1(base, visible, ctx) or _tier2(graph, base, visible, ctx, inherited)
    if routed.by == "menu" and decider is not None:
        routed = _ask_decider(routed, decider, decider_name, ctx.user_message)
    return _finish(routed, posture)


def _tier2(graph: SkillGraph, base: TurnRouting, visible: Sequence[Entry],
           ctx: InjectionContext, inherited: str | None) -> TurnRouting:
    every = tuple(dict.fromkeys(e.skill_id for e in visible))
    setup = _tier2_setup(graph, visible, inherited)
    pairs = _score(setup, ctx.user_message) if setup and setup.candidates else None
    if setup is None or pairs is None:
        if inherited is not None:
            return replace(base, by="continuity", to=inherited)
        if setup is None:
            return base
        return replace(base, by="menu", scorer=setup.scorer.name, offered=every)
    verdict = decide_tier2(
        pairs, inherited, base.policy, floor=setup.floor, categorical=setup.scorer.categorical
    )
    return _from_verdict(replace(base, scorer=setup.scorer.name), verdict, every, inherited)


def _ask_decider(routed: TurnRouting, decider: Decider, name: tuple[str, str],
                 user_message: str) -> TurnRouting:
    offered = routed.offered or ()
    options = (*offered, *(("stay",) if routed.stay_offered else ()), "none")
    query = DeciderQuery(user_message=user_message, offered=offered, options=options,
                         stay_offered=routed.stay_offered, relevance=routed.relevance)
    try:
        picked = decider(query)
    except Exception:  # a raising decider leaves the menu standing
        picked = None
    return apply_decider(routed, picked, provider=name[0], model=name[1])


def apply_decider(routed: TurnRouting, picked: str | None, *, provider: str,
                  model: str) -> TurnRouting:
    """Resolve a menu with a decider's answer: an offered id, 'stay', else the menu stands."""
    offered = routed.offered or ()
    if isinstance(picked, str) and picked in offered:
        record = DeciderCall(provider=provider, model=model, picked=picked)
        return replace(routed, by="decider", to=picked, decider=record)
    if picked == "stay" and routed.stay_offered and routed.from_skill is not None:
        record = DeciderCall(provider=provider, model=model, picked="stay")
        return replace(routed, by="continuity", to=routed.from_skill, decider=record)
    return replace(routed, decider=DeciderCall(provider=provider, model=model))


def _finish(routed: TurnRouting, posture: Posture | None) -> TurnRouting:
    """Stamp the ``turn_route`` the ctx carries; a menu under rails is recorded as ``none``."""
    relevance = dict(routed.relevance) or None
    if routed.by == "menu":
        if posture == "rails":
            return replace(routed, by="none", turn_route=None)
        tr = TurnRoute(by="menu", from_skill=routed.from_skill, offered=routed.offered,
                       stay_offered=routed.stay_offered, relevance=relevance)
        return replace(routed, turn_route=tr)
    if routed.to is None:
        return routed
    tr = TurnRoute(by=routed.by, from_skill=routed.from_skill, to=routed.to,
                   witness=routed.witness, relevance=relevance)
    return replace(routed, turn_route=tr)


# ── PickEntry and the menu hint ─────────────────────────────────────────────


def pick_entry(graph: SkillGraph, ctx: InjectionContext) -> EntryPick | None:
    """PickEntry for ``entry_by`` graphs: score the entries whose condition holds; argmax wins."""
    router = graph.router
    if router is None or router.kind != "entry-by" or router.scorer is None:
        return None
    hidden = frozenset(ctx.hidden_skill_ids or ())
    ids: list[str] = []
    for entry in graph.entries:
        if entry.skill_id in hidden or entry.skill_id in ids:
            continue
        try:
            if entry_hit(entry, ctx) is not None:
                ids.append(entry.skill_id)
        except Exception:  # a raising condition excludes the entry
            continue
    if not ids:
        return None
    cands = [(i, _describe(graph, i)) for i in ids]
    try:
        raw = [_as_float(s) for s in router.scorer.score(ctx.user_message, cands)]
    except Exception:  # nothing is written; the cold walk decides
        return None
    if len(raw) != len(ids):
        return None
    best = max(range(len(ids)), key=lambda k: (raw[k], -k))
    shares = _softmax(raw)
    scores = tuple(
        EntryScore(id=i, score=s, relevance=r) for i, s, r in zip(ids, raw, shares, strict=True)
    )
    return EntryPick(skill_id=ids[best], entry_scores=scores, scorer=router.scorer.name)


def _menu_open(ctx: InjectionContext) -> bool:
    return ctx.iteration == 1 and ctx.turn_route is not None and ctx.turn_route.offered is not None


def skill_menu_hint() -> Injection:
    """The auto-registered ``skill-menu-hint``: active on iteration 1 while a menu is offered."""
    return define_instruction(
        "skill-menu-hint",
        prompt=(
            "Several skills fit this request about equally well. read_skill's description "
            "lists them with their relevance; pick the one that fits with read_skill, "
            "or stay where you are."
        ),
        active_when=_menu_open,
        description="the turn's routing left a menu: ask the model to pick",
    )
