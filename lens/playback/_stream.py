"""A run's events as a decision stream: what replay and diff compare.

Two runs made the same decisions when their events match in type, place
(turn, iteration, step) and decision payload. Envelope bookkeeping (run id,
seq, timestamps, trace ids) and measurements (durations) never count, nor do
texts a hash already stands for (``raw_content`` has ``content_hash``,
``request_ref`` has ``request_hash``), so a redacted recording compares
equal to a full one. ``response_hash`` is left out too: it covers provider
bookkeeping (a response id) that a recording does not keep; so are the
deployment labels ``release`` and ``environment`` (a new release that makes
the same decisions replays identically), and ``llm.start``'s ``params`` (the
wire parameters: the request hash covers what the model is asked, and the
seed among them differs on every re-run, while a recording older than them
has none).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from footprint.events import (
    AFTER_END_TYPES,
    ContextEvaluated,
    ContextInjected,
    Event,
    InjectionDeclared,
    LLMEnd,
    LLMStart,
    RunStart,
    SkillEscalated,
    SkillRejected,
    ToolEnd,
    ToolStart,
    payload_of,
    summarize_content,
)
from footprint.events._evidence import JSONValue
from lens.playback._terminal import terminal_safe

__all__ = [
    "DECLARATION_TYPES",
    "IGNORED_FIELDS",
    "Decision",
    "Divergence",
    "canonical",
    "changed_fields",
    "clip",
    "config_changes",
    "decisions_of",
    "describe",
    "divergence",
    "first_divergence",
    "label_of",
]

DECLARATION_TYPES = frozenset({"run.configured", "skill.graph_declared", "injection.declared"})
"""How the run was configured: compared as a set, not as decisions in order."""

IGNORED_FIELDS = frozenset({
    "duration_ms", "conversation_id", "request_ref", "raw_content", "response_hash",
    "release", "environment", "time_to_first_chunk_s", "params", "foreign_trace_id",
})
"""Payload fields that never make two decisions differ (see the module docstring); an
ingested run's foreign trace id names where it came from, as a run id does."""


def clip(value: object, width: int = 70) -> str:
    """One line of at most ``width`` characters (``…`` when cut), control characters
    escaped (:func:`terminal_safe`); ``None`` is empty."""
    folded = " ".join(("" if value is None else str(value)).split())  # CR, tabs: spaces
    return summarize_content(terminal_safe(folded), width)


def canonical(value: object) -> str:
    """Stable JSON text of a payload value (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """One event as the stream compares it: its place and its decision payload."""

    event: Event
    place: tuple[int, int, str]
    fields: Mapping[str, JSONValue]

    @property
    def type(self) -> str:
        return str(self.event.type)

    @property
    def key(self) -> tuple[str, tuple[int, int, str], str]:
        return self.type, self.place, canonical(dict(self.fields))


def _decision(e: Event) -> Decision:
    fields = {k: v for k, v in payload_of(e).items()
              if k not in IGNORED_FIELDS and k != "type"}
    if e.parent_step is not None:
        fields["parent_step"] = e.parent_step
    return Decision(event=e, place=(e.turn, e.iteration, e.step_id), fields=fields)


def decisions_of(events: Iterable[Event]) -> tuple[list[Decision], list[Decision]]:
    """``(declarations, decisions)``: the configuration, then the decision stream in order."""
    declared: list[Decision] = []
    decided: list[Decision] = []
    for e in events:
        if e.type in AFTER_END_TYPES:
            continue  # feedback: what was said about the run afterwards, not what it did
        (declared if e.type in DECLARATION_TYPES else decided).append(_decision(e))
    return declared, decided


def changed_fields(a: Decision, b: Decision) -> list[str]:
    """The payload fields (and place parts) in which two decisions differ, in field order."""
    names = list(dict.fromkeys([*a.fields, *b.fields]))
    out = [n for n in names if canonical(a.fields.get(n)) != canonical(b.fields.get(n))]
    if a.place != b.place:
        out.insert(0, "place")
    return out


def first_divergence(expected: Sequence[Decision], got: Sequence[Decision]) -> int | None:
    """The index of the first decision that differs (or is missing), else ``None``."""
    for i, (a, b) in enumerate(zip(expected, got, strict=False)):
        if a.key != b.key:
            return i
    if len(expected) != len(got):
        return min(len(expected), len(got))
    return None


_LABEL = re.compile(r"[\w-]+")


def label_of(answer: str) -> str:
    """An answer's label: its first word (``APPROVED: …`` -> ``APPROVED``; ``""`` if none)."""
    hit = _LABEL.search(answer)
    return hit.group(0) if hit else ""


def _args(args: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def describe(e: Event) -> str:
    """A short line naming what the event decided."""
    if isinstance(e, ContextEvaluated):
        move = e.cursor_move
        cursor = (f"; cursor {move.from_skill or 'start'}→{move.to or '∅'} by {move.by}"
                  if move is not None else "")
        return f"active [{', '.join(e.active_ids)}]{cursor}"
    if isinstance(e, ContextInjected):
        return (f"{e.slot} ← {e.injection_id or e.source} #{e.content_hash[:8]} "
                f"({e.admitted_via})")
    if isinstance(e, InjectionDeclared):
        return f"declared {e.flavor} {e.injection_id!r} ({e.trigger_kind})"
    if isinstance(e, LLMStart):
        return f"{e.model} request #{e.request_hash[:12]}"
    if isinstance(e, LLMEnd):
        calls = "; ".join(f"{c.name}({_args(c.arguments)})" for c in e.tool_calls)
        return clip(e.content or calls or "(empty)")
    if isinstance(e, ToolStart):
        return clip(f"{e.tool_name}({_args(e.args)})")
    if isinstance(e, ToolEnd):
        return clip(f"{e.tool_name} → {e.status or ('error' if e.error else 'ok')}: {e.result}")
    if isinstance(e, SkillRejected):
        return f"refused read_skill({e.requested_id!r}): {e.reason}"
    if isinstance(e, SkillEscalated):
        return f"escalated to {e.to_provider}/{e.to_model}"
    if isinstance(e, RunStart):
        return clip(e.user_message)
    return clip(canonical({k: v for k, v in payload_of(e).items()
                           if k not in IGNORED_FIELDS and k != "type"}), 60)


@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """The first decision of one stream that differs from another's."""

    index: int
    expected_seq: int | None
    got_seq: int | None
    step: str
    iteration: int
    expected: str
    got: str
    fields: tuple[str, ...] = ()


def _value_change(name: str, x: object, y: object,
                  sides: tuple[str, str] = ("expected", "got")) -> str:
    """``name: expected X, got Y``; for two lists, the items removed and added."""
    if isinstance(x, list) and isinstance(y, list):
        gone = [clip(canonical(v), 40) for v in x if v not in y]
        new = [clip(canonical(v), 40) for v in y if v not in x]
        if gone or new:
            return f"{name}: " + " ".join([*(f"-{g}" for g in gone), *(f"+{n}" for n in new)])
    return f"{name}: {sides[0]} {clip(x, 60)}, {sides[1]} {clip(y, 60)}"


def _field_lines(a: Decision, b: Decision, limit: int = 4,
                 sides: tuple[str, str] = ("expected", "got")) -> tuple[str, ...]:
    lines = []
    for name in changed_fields(a, b)[:limit]:
        if name == "place":
            lines.append(f"place: {sides[0]} {a.place}, {sides[1]} {b.place}")
        else:
            lines.append(_value_change(name, a.fields.get(name), b.fields.get(name), sides))
    return tuple(lines)


def config_changes(expected: Sequence[Decision], got: Sequence[Decision]) -> tuple[str, ...]:
    """Declarations only one side has; a changed singleton (``run.configured``) by field."""
    a, b = Counter(d.key for d in expected), Counter(d.key for d in got)
    by_key = {d.key: d for d in [*expected, *got]}
    gone = [by_key[k] for k in a - b]
    new = [by_key[k] for k in b - a]
    out: list[str] = []
    for d in list(gone):
        twin = next((n for n in new if n.type == d.type and d.type != "injection.declared"),
                    None)
        if twin is not None:
            gone.remove(d)
            new.remove(twin)
            out += [f"~ {d.type}: {line}" for line in _field_lines(d, twin, limit=6)]
    out += [f"- {d.type}: {describe(d.event)}" for d in gone]
    out += [f"+ {d.type}: {describe(d.event)}" for d in new]
    return tuple(out)


def divergence(expected: Sequence[Decision], got: Sequence[Decision],
               sides: tuple[str, str] = ("expected", "got")) -> Divergence | None:
    """The first decision of ``got`` that differs from ``expected``, described."""
    i = first_divergence(expected, got)
    if i is None:
        return None
    a = expected[i] if i < len(expected) else None
    b = got[i] if i < len(got) else None
    ref = a or b
    assert ref is not None
    return Divergence(
        index=i, expected_seq=a.event.seq if a else None, got_seq=b.event.seq if b else None,
        step=ref.event.step_id, iteration=ref.event.iteration,
        expected=f"{a.type}: {describe(a.event)}" if a else "(the recording ends here)",
        got=f"{b.type}: {describe(b.event)}" if b else "(the replay made no further decision)",
        fields=_field_lines(a, b, sides=sides)
        if a is not None and b is not None and a.type == b.type else ())
