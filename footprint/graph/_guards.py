"""Route guards ``{key: {op: value}}``: compile once, judge every hop (spec §2.3).

:func:`compile_guard` refuses a malformed guard at build time and pre-splits
it into conditions with their readers and tests, so that
:meth:`CompiledGuard.evaluate` - which runs per route, per tool result, per
iteration - only reads values and compares. Evaluation never raises: every
condition yields :class:`~footprint.events.ConditionEvidence`, with no
short-circuit, and the verdict is their AND.

Semantics are Python's (spec "Decisions" §1): ordering compares two numbers
(never bools) or two strings, anything else fails with ``type-mismatch``;
``eq``/``ne`` use ``==`` except that bools never equal numbers.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from footprint._errors import ConfigError, did_you_mean
from footprint.events import ConditionEvidence, GuardEvidence, JSONScalar, JSONValue
from footprint.injection import ToolStatus

__all__ = [
    "GUARD_OPS",
    "HOP_KEYS",
    "MISSING",
    "CompiledGuard",
    "GuardCondition",
    "GuardOp",
    "GuardValue",
    "Hop",
    "compile_guard",
    "summarize_actual",
    "unsatisfiable_reasons",
]

GuardOp: TypeAlias = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in"]
GuardValue: TypeAlias = JSONScalar | tuple[JSONScalar, ...]

GUARD_OPS: tuple[GuardOp, ...] = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in")
_OP_ALIASES: Final[Mapping[str, GuardOp]] = {"notIn": "not_in"}
_ORDERED: Final = frozenset({"gt", "gte", "lt", "lte"})
_SYMBOL: Final[Mapping[GuardOp, str]] = {
    "eq": "=", "ne": "≠", "gt": ">", "gte": "≥", "lt": "<", "lte": "≤",
    "in": "in", "not_in": "not in",
}
# Canonical hop key for every accepted spelling.
HOP_KEYS: Final[Mapping[str, str]] = {
    "tool_name": "tool_name", "toolName": "tool_name",
    "result": "result",
    "status": "status",
    "iteration": "iteration",
    "user_message": "user_message", "userMessage": "user_message",
    "current_skill_id": "current_skill_id", "currentSkillId": "current_skill_id",
}
_DENIED_KEYS: Final = frozenset({
    "__proto__", "constructor", "prototype", "toString", "toLocaleString", "valueOf",
    "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "__defineGetter__",
    "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
})
_COMPARE: Final[Mapping[str, Callable[[Any, Any], Any]]] = {
    "gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le,
}
_MAX_IN = 1000
_SUMMARY_CAP = 80
_SMALL_INT = 10**15


class _Missing:
    """The value of a key the hop does not carry (JavaScript's ``undefined``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class Hop:
    """One tool result as a guard sees it: the six keys read directly."""

    tool_name: str
    result: str
    status: ToolStatus | None = None
    iteration: int = 1
    user_message: str = ""
    current_skill_id: str | None = None


@dataclass(frozen=True, slots=True)
class GuardCondition:
    """One declared condition: ``key op value`` (``op`` canonical, ``notIn`` -> ``not_in``)."""

    key: str
    op: GuardOp
    value: GuardValue

    def caption(self) -> str:
        """``key OP value``, e.g. ``score > 5`` or ``riskLevel ≥ "high"``."""
        return f"{self.key} {_SYMBOL[self.op]} {_render(self.value)}"


def _render(value: GuardValue) -> str:
    if isinstance(value, tuple):
        return "[" + ",".join(_render(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


_Test: TypeAlias = Callable[[object], "tuple[bool, str | None]"]


def _same(a: object, b: object) -> bool:
    """Python equality, except that a bool never equals a number."""
    if isinstance(a, bool) is not isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def _comparable(a: object, b: object) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return True
    return _is_number(a) and _is_number(b)


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _make_test(op: GuardOp, value: GuardValue) -> _Test:
    if op in _ORDERED:
        return _ordered_test(op, value)
    if op in ("in", "not_in"):
        assert isinstance(value, tuple)
        members = value
        if op == "in":
            return lambda a: _missing_or(a, False, lambda x: any(_same(x, m) for m in members))
        return lambda a: _missing_or(a, True, lambda x: not any(_same(x, m) for m in members))
    if op == "eq":
        return lambda a: _missing_or(a, False, lambda x: _same(x, value))
    return lambda a: _missing_or(a, True, lambda x: not _same(x, value))


def _missing_or(
    actual: object, when_missing: bool, test: Callable[[object], bool]
) -> tuple[bool, str | None]:
    if actual is MISSING:
        return when_missing, None if when_missing else "missing"
    return test(actual), None


def _ordered_test(op: GuardOp, bound: GuardValue) -> _Test:
    compare = _COMPARE[op]

    def test(actual: object) -> tuple[bool, str | None]:
        if actual is MISSING:
            return False, "missing"
        if not _comparable(actual, bound):
            return False, "type-mismatch"
        return bool(compare(actual, bound)), None

    return test


def summarize_actual(actual: object) -> str:
    """``'undefined'`` for a missing value, else its JSON, capped at 80 characters."""
    if actual is MISSING:
        return "undefined"
    if actual is None:
        return "null"
    if type(actual) is bool:
        return "true" if actual else "false"
    if type(actual) is int and -_SMALL_INT < actual < _SMALL_INT:
        return str(actual)
    try:
        text = json.dumps(actual, ensure_ascii=False)
    except Exception:
        text = repr(actual)
    if len(text) > _SUMMARY_CAP:
        return text[: _SUMMARY_CAP - 1] + "…"
    return text


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _parse_object(result: object) -> dict[str, object] | None:
    """The top level of ``result`` as a JSON object, or None (strict JSON: no NaN)."""
    try:
        parsed = json.loads(result, parse_constant=_reject_constant)  # type: ignore[arg-type]
    except Exception:
        return None
    return parsed if isinstance(parsed, dict) else None


@dataclass(frozen=True, slots=True)
class _Compiled:
    condition: GuardCondition
    hop_key: str | None  # canonical hop attribute, or None for a JSON key
    test: _Test


class CompiledGuard:
    """A validated guard: its conditions, pre-split with their readers and tests."""

    __slots__ = ("_compiled", "_needs_json", "conditions", "where")

    def __init__(self, compiled: tuple[_Compiled, ...], where: str) -> None:
        self._compiled = compiled
        self._needs_json = any(c.hop_key is None for c in compiled)
        self.conditions: tuple[GuardCondition, ...] = tuple(c.condition for c in compiled)
        self.where = where

    def evaluate(self, hop: Hop) -> GuardEvidence:
        """Judge every condition against ``hop`` (no short-circuit). Never raises."""
        body = _parse_object(getattr(hop, "result", None)) if self._needs_json else None
        evidence = tuple([_judge(c, hop, body) for c in self._compiled])
        verdict = True
        for e in evidence:
            verdict = verdict and e.passed
        return GuardEvidence(verdict=verdict, conditions=evidence)

    def caption(self) -> str:
        """The conditions as ``key OP value``, joined by `` AND ``."""
        return " AND ".join(c.caption() for c in self.conditions)

    def mermaid_caption(self) -> str:
        """``when <caption>``, with ``|`` and ``"`` escaped for a mermaid edge label."""
        return "when " + self.caption().replace("|", "#124;").replace('"', "#quot;")

    def __repr__(self) -> str:
        return f"CompiledGuard({self.where!r}: {self.caption()})"


def _read(c: _Compiled, hop: Hop, body: dict[str, object] | None) -> tuple[object, str | None]:
    if c.hop_key is not None:
        value = getattr(hop, c.hop_key, None)
        return (MISSING, None) if value is None else (value, None)
    if body is None:
        return MISSING, "not-json"
    key = c.condition.key
    return (body[key], None) if key in body else (MISSING, None)


def _judge(c: _Compiled, hop: Hop, body: dict[str, object] | None) -> ConditionEvidence:
    cond = c.condition
    try:
        actual, read_note = _read(c, hop, body)
        passed, note = c.test(actual)
        summary = summarize_actual(actual)
    except Exception:  # a defensive net: evaluation must never raise
        passed, note, read_note, summary = False, "error", None, "undefined"
    if passed:
        note = None
    elif read_note is not None:
        note = read_note
    return ConditionEvidence(
        key=cond.key, op=cond.op, value=_evidence_value(cond.value),
        actual_summary=summary, passed=passed, note=note,
    )


def _evidence_value(value: GuardValue) -> JSONValue:
    return list(value) if isinstance(value, tuple) else value


# ── compilation ────────────────────────────────────────────────────────────


def compile_guard(spec: Mapping[str, Mapping[str, object]], *, where: str) -> CompiledGuard:
    """Validate ``spec`` and pre-split it into conditions, in declaration order.

    Raises :class:`ConfigError` naming ``where`` (the route) for every
    refusal of spec §2.3.
    """
    if not isinstance(spec, Mapping) or not spec:
        raise ConfigError(
            f"{where}: guard {spec!r} must be a non-empty mapping of key -> {{op: value}}, "
            "e.g. {'score': {'gt': 5}}"
        )
    compiled: list[_Compiled] = []
    for key, ops in spec.items():
        _check_key(key, where)
        if not isinstance(ops, Mapping) or not ops:
            raise ConfigError(
                f"{where}: guard key {key!r} has ops {ops!r}; give a non-empty mapping "
                "such as {'eq': 'high'}"
            )
        seen: set[GuardOp] = set()
        for raw_op, raw_value in ops.items():
            op = _check_op(raw_op, key, where)
            if op in seen:
                raise ConfigError(
                    f"{where}: guard key {key!r} declares {op!r} twice (as {raw_op!r}); "
                    "keep one"
                )
            seen.add(op)
            value = _check_value(op, raw_value, key, where)
            condition = GuardCondition(key, op, value)
            compiled.append(_Compiled(condition, HOP_KEYS.get(key), _make_test(op, value)))
    return CompiledGuard(tuple(compiled), where)


def _check_key(key: object, where: str) -> None:
    if not isinstance(key, str) or not key:
        raise ConfigError(f"{where}: guard key {key!r} must be a non-empty string")
    if key in _DENIED_KEYS or (key.startswith("__") and key.endswith("__")):
        raise ConfigError(
            f"{where}: guard key {key!r} is not allowed (it names an object internal); "
            "rename the field your tool returns"
        )


def _check_op(raw_op: object, key: str, where: str) -> GuardOp:
    if isinstance(raw_op, str):
        if raw_op in _OP_ALIASES:
            return _OP_ALIASES[raw_op]
        for op in GUARD_OPS:
            if raw_op == op:
                return op
    hint = did_you_mean(raw_op, [*GUARD_OPS, *_OP_ALIASES]) if isinstance(raw_op, str) else ""
    raise ConfigError(
        f"{where}: guard key {key!r} uses unknown operator {raw_op!r}{hint}; "
        f"use one of {', '.join(GUARD_OPS)}"
    )


def _check_value(op: GuardOp, value: object, key: str, where: str) -> GuardValue:
    if op in ("in", "not_in"):
        return _check_members(op, value, key, where)
    if op in _ORDERED:
        if not (isinstance(value, str) or (_is_number(value) and _finite(value))):
            raise ConfigError(
                f"{where}: guard {key!r} {op} {value!r} needs a finite number or a string "
                "to compare against"
            )
        assert isinstance(value, str | int | float)
        return value
    if not _is_scalar(value):
        raise ConfigError(
            f"{where}: guard {key!r} {op} {value!r} needs a scalar (string, finite number, "
            "bool) or None; use 'in' to test several values"
        )
    assert value is None or isinstance(value, str | int | float | bool)
    return value


def _check_members(op: GuardOp, value: object, key: str, where: str) -> GuardValue:
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError(
            f"{where}: guard {key!r} {op} {value!r} needs a non-empty list of values"
        )
    if len(value) > _MAX_IN:
        raise ConfigError(
            f"{where}: guard {key!r} {op} lists {len(value)} values; the limit is {_MAX_IN}, "
            "so match on a coarser field"
        )
    bad = [v for v in value if not _is_scalar(v)]
    if bad:
        raise ConfigError(
            f"{where}: guard {key!r} {op} holds non-scalar {bad[0]!r}; list only strings, "
            "finite numbers, bools or None"
        )
    return tuple(value)


def _finite(value: object) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _is_scalar(value: object) -> bool:
    if value is None or isinstance(value, str | bool):
        return True
    return _is_number(value) and _finite(value)


# ── guard-unsatisfiable ────────────────────────────────────────────────────

_STATUSES: Final[tuple[str, ...]] = (
    "success", "failure", "denied", "invalid", "partial", "pending", "absent"
)


def unsatisfiable_reasons(
    guard: CompiledGuard,
    *,
    on_tool_return: str | re.Pattern[str] | None = None,
    on_tool_status: tuple[ToolStatus, ...] | None = None,
) -> tuple[str, ...]:
    """Why ``guard`` can never pass on its edge; empty when no proof exists.

    Only contradictions provable within a single key are reported (spec
    §2.3): ``eq`` against ``ne``/``in``/``not_in``/a bound, crossed bounds of
    one type, ``in`` within ``not_in``, a ``status`` outside the closed set
    or against the edge's ``on_tool_status``, and a ``tool_name`` against an
    exact ``on_tool_return``. Never across keys, JSON values, regexes or types.
    """
    by_key: dict[str, list[GuardCondition]] = {}
    for condition in guard.conditions:
        by_key.setdefault(HOP_KEYS.get(condition.key, condition.key), []).append(condition)
    reasons: list[str] = []
    for canonical, conditions in by_key.items():
        reasons.extend(_pair_reasons(conditions))
        if canonical == "status":
            reasons.extend(_status_reasons(conditions, on_tool_status))
        if canonical == "tool_name" and isinstance(on_tool_return, str):
            reasons.extend(
                _edge_reasons(conditions, (on_tool_return,), f"on_tool_return={on_tool_return!r}")
            )
    return tuple(reasons)


def _pair_reasons(conditions: list[GuardCondition]) -> list[str]:
    reasons: list[str] = []
    for i, first in enumerate(conditions):
        for second in conditions[i + 1:]:
            why = _contradiction(first, second) or _contradiction(second, first)
            if why is not None:
                reasons.append(
                    f"{first.caption()} AND {second.caption()} can never both hold: {why}; "
                    "fix or remove one of them"
                )
    return reasons


def _contradiction(a: GuardCondition, b: GuardCondition) -> str | None:
    """Why ``a`` and ``b`` exclude each other (checked with ``a`` as the left side)."""
    if a.op == "eq":
        return _eq_against(a.value, b)
    if a.op in ("gt", "gte") and b.op in ("lt", "lte"):
        lo, hi = a.value, b.value
        if not _comparable(lo, hi):
            return None
        strict = a.op == "gt" or b.op == "lt"
        if lo > hi or (lo == hi and strict):  # type: ignore[operator]
            return "the bounds cross"
    if a.op == "in" and b.op == "not_in":
        assert isinstance(a.value, tuple) and isinstance(b.value, tuple)
        if all(any(_same(v, w) for w in b.value) for v in a.value):
            return "every allowed value is excluded"
    return None


def _eq_against(value: GuardValue, other: GuardCondition) -> str | None:
    if other.op == "ne" and _same(value, other.value):
        return "a value cannot equal and differ from the same thing"
    if other.op in ("in", "not_in"):
        assert isinstance(other.value, tuple)
        member = any(_same(value, m) for m in other.value)
        if member == (other.op == "not_in"):
            return "the required value is " + ("excluded" if member else "not allowed")
    if (
        other.op in _ORDERED
        and _comparable(value, other.value)
        and not _ordered_test(other.op, other.value)(value)[0]
    ):
        return "the required value is out of bounds"
    return None


def _status_reasons(
    conditions: list[GuardCondition], on_tool_status: tuple[ToolStatus, ...] | None
) -> list[str]:
    reasons: list[str] = []
    closed = ", ".join(_STATUSES)
    unknown = [c for c in conditions if _names_no_status(c)]
    for c in unknown:
        what = (f"{c.value!r} is not a result status" if c.op == "eq"
                else f"none of {_evidence_value(c.value)!r} is a result status")
        reasons.append(f"{c.caption()} can never hold: {what}; use one of {closed}")
    if on_tool_status:
        known = [c for c in conditions if c not in unknown]
        reasons.extend(_edge_reasons(known, on_tool_status, f"on_tool_status={on_tool_status!r}"))
    return reasons


def _names_no_status(c: GuardCondition) -> bool:
    if c.op == "eq":
        return c.value not in _STATUSES
    if c.op == "in" and isinstance(c.value, tuple):
        return not any(v in _STATUSES for v in c.value)
    return False


def _edge_reasons(
    conditions: list[GuardCondition], allowed: tuple[str, ...], edge: str
) -> list[str]:
    """Conditions that no value the edge lets through (``allowed``) can pass."""
    reasons: list[str] = []
    for c in conditions:
        if c.op not in ("eq", "ne", "in", "not_in"):
            continue
        test = _make_test(c.op, c.value)
        if not any(test(v)[0] for v in allowed):
            reasons.append(
                f"{c.caption()} can never hold on an edge with {edge}; "
                "align the guard with the edge or drop the condition"
            )
    return reasons
