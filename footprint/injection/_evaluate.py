"""Which injections are active this iteration, and why the others are not.

``evaluate_injections`` is spec §1.3 with the project's Decisions §3: in
declaration order, a hidden skill is refused first, then a parked id, then
a leased id is admitted without its trigger, then the trigger decides.
Pass 2 (the template gate) skips an admitted templated injection whose
facts this context cannot supply. Nothing here raises: a raising predicate
or a malformed injection becomes a skip with its reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, is_dataclass

from footprint.events import SkippedInjection
from footprint.injection._template import TEMPLATE_FACTS, missing_facts, template_names
from footprint.injection._types import (
    Always,
    HistoryMessage,
    Injection,
    InjectionContext,
    LLMActivated,
    OnToolReturn,
    Rule,
    ToolResult,
)

__all__ = [
    "InjectionEvaluation",
    "evaluate_injections",
    "is_hidden_skill",
    "said_by_person",
    "tool_results_of",
]

_PARKED_NOTE = (
    "parked: its map is parked, so it stops riding until evidence re-engages it; "
    "the map's cursor has not moved"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectionEvaluation:
    """The active injections and the skipped ones, each in declaration order.

    ``unknown-fact`` skips (pass 2) follow the pass-1 skips.
    """

    active: tuple[Injection, ...]
    skipped: tuple[SkippedInjection, ...]


def tool_results_of(ctx: InjectionContext) -> tuple[ToolResult, ...]:
    """The previous batch: ``tool_results`` if present (even empty), else the last one, else ()."""
    if ctx.tool_results is not None:
        return tuple(ctx.tool_results)
    if ctx.last_tool_result is not None:
        return (ctx.last_tool_result,)
    return ()


def said_by_person(ctx: InjectionContext) -> tuple[HistoryMessage, ...]:
    """The history messages a person wrote: role user, not injected, not library-written."""
    return tuple(
        m for m in ctx.history
        if m.role == "user" and m.injected_by is None and not m.library_written
    )


def is_hidden_skill(ctx: InjectionContext, id: str) -> bool:
    """True when the caller's role may not see skill ``id`` on this pass."""
    hidden = ctx.hidden_skill_ids
    return hidden is not None and id in hidden


def _json_default(value: object) -> object:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    if isinstance(value, re.Pattern):
        return f"/{value.pattern}/"
    return repr(value)


def unhandled_trigger_error(trigger: object) -> str:
    """``Unhandled trigger: <json>`` (falls back to repr for what JSON cannot hold)."""
    try:
        text = json.dumps(trigger, default=_json_default, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(trigger)
    return "Unhandled trigger: " + text


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    return text if text else type(exc).__name__


def _unknown_fact_error(missing: tuple[str, ...]) -> str:
    named = ", ".join(f"{{{{{name}}}}}" for name in missing)
    known = [n for n in missing if n in TEMPLATE_FACTS]
    why = (
        "it needs InjectionContext.max_iterations, which this evaluation lacks"
        if known else "it is not a run-time fact"
    )
    if known and len(known) < len(missing):
        why = "some need InjectionContext.max_iterations and the rest are not facts"
    return f"unknown fact {named}: {why}; the whole instruction was skipped"


def _tool_hit(pattern: str | re.Pattern[str], names: Sequence[str],
              name_set: frozenset[str]) -> bool:
    if type(pattern) is str:
        return pattern in name_set
    if isinstance(pattern, re.Pattern):
        search = pattern.search
        return any(search(name) for name in names)
    return False


def _slow_trigger(
    inj: Injection, ctx: InjectionContext, names: Sequence[str],
    name_set: frozenset[str], activated: frozenset[str],
) -> SkippedInjection | bool:
    """The isinstance path for trigger subclasses and unknown kinds."""
    trigger = inj.trigger
    if isinstance(trigger, Always):
        return True
    if isinstance(trigger, Rule):
        try:
            return bool(trigger.active_when(ctx))
        except Exception as exc:
            return SkippedInjection(id=inj.id, reason="predicate-threw",
                                    error=_error_text(exc))
    if isinstance(trigger, OnToolReturn):
        return _tool_hit(trigger.tool_name, names, name_set)
    if isinstance(trigger, LLMActivated):
        return inj.id in activated
    return SkippedInjection(id=inj.id, reason="unknown-trigger-kind",
                            error=unhandled_trigger_error(trigger))


def _template_gate(
    admitted: list[Injection], ctx: InjectionContext, skipped: list[SkippedInjection]
) -> list[Injection]:
    """Pass 2: skip admitted templates whose facts are missing (``unknown-fact``)."""
    active: list[Injection] = []
    for inj in admitted:
        if inj.templated is True and inj.inject.system_prompt:
            try:
                missing = missing_facts(template_names(inj.inject.system_prompt), ctx)
            except Exception as exc:
                skipped.append(SkippedInjection(id=str(inj.id), reason="unknown-fact",
                                                error=_error_text(exc)))
                continue
            if missing:
                skipped.append(SkippedInjection(id=inj.id, reason="unknown-fact",
                                                error=_unknown_fact_error(missing)))
                continue
        active.append(inj)
    return active


def _as_set(ids: Iterable[str] | None) -> frozenset[str]:
    try:
        return frozenset(ids) if ids else frozenset()
    except TypeError:
        return frozenset()


@dataclass(frozen=True, slots=True)
class _Pass:
    """What one evaluation reads from the context, resolved once before the loop."""

    ctx: InjectionContext
    names: Sequence[str]
    name_set: frozenset[str]
    hidden: frozenset[str]
    parked: frozenset[str]
    leased: frozenset[str]
    activated: frozenset[str]


def _prepare(ctx: InjectionContext) -> _Pass:
    try:
        names = [r.tool_name for r in tool_results_of(ctx) if isinstance(r.tool_name, str)]
    except Exception:
        names = []
    return _Pass(
        ctx, names, frozenset(names),
        _as_set(getattr(ctx, "hidden_skill_ids", None)),
        _as_set(getattr(ctx, "parked_ids", None)),
        _as_set(getattr(ctx, "lease_active_ids", None)),
        _as_set(getattr(ctx, "activated_injection_ids", None)),
    )


def _decide(p: _Pass, inj: Injection) -> SkippedInjection | bool:
    """Pass 1 for one injection: hidden, parked, leased, then the trigger."""
    iid = inj.id
    if p.hidden and iid in p.hidden and inj.flavor == "skill":
        return SkippedInjection(id=iid, reason="hidden")
    if p.parked and iid in p.parked:
        return SkippedInjection(id=iid, reason="parked", error=_PARKED_NOTE)
    if p.leased and iid in p.leased:
        return True
    trigger = inj.trigger
    kind = type(trigger)
    if kind is Always:
        return True
    if kind is LLMActivated:
        return iid in p.activated
    if kind is OnToolReturn:
        return _tool_hit(trigger.tool_name, p.names, p.name_set)  # type: ignore[union-attr]
    if kind is Rule:
        try:
            return bool(trigger.active_when(p.ctx))  # type: ignore[union-attr]
        except Exception as exc:
            return SkippedInjection(id=iid, reason="predicate-threw", error=_error_text(exc))
    return _slow_trigger(inj, p.ctx, p.names, p.name_set, p.activated)


def evaluate_injections(
    injections: Iterable[Injection], ctx: InjectionContext
) -> InjectionEvaluation:
    """Evaluate every injection against one context (spec §1.3, Decisions §3).

    Never raises for an ordinary exception: a predicate that raises, or an
    entry that is not a well-formed injection, becomes a skip.
    """
    p = _prepare(ctx)
    admitted: list[Injection] = []
    skipped: list[SkippedInjection] = []
    try:
        items = list(injections)
    except Exception:
        items = []
    for inj in items:
        try:
            verdict = _decide(p, inj)
        except Exception as exc:
            verdict = _malformed(inj, exc)
        if verdict is True:
            admitted.append(inj)
        elif verdict is not False:
            skipped.append(verdict)
    active = _template_gate(admitted, ctx, skipped)
    return InjectionEvaluation(active=tuple(active), skipped=tuple(skipped))


def _malformed(inj: object, exc: Exception) -> SkippedInjection:
    """An entry the evaluator could not even read: reported, never raised."""
    raw_id = getattr(inj, "id", None)
    iid = raw_id if isinstance(raw_id, str) else repr(raw_id)
    trigger = getattr(inj, "trigger", None)
    if trigger is None or not hasattr(trigger, "kind"):
        return SkippedInjection(id=iid, reason="unknown-trigger-kind",
                                error=unhandled_trigger_error(trigger))
    return SkippedInjection(id=iid, reason="predicate-threw", error=_error_text(exc))
