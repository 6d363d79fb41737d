"""The answer's chain of custody, walked from the recorded events alone.

ANSWER <- the model call that wrote it <- the pieces that LANDED in its
prompt (``context.injected``) <- the event that ALLOWED each one
(``admitted_by``) <- where it was BORN (``injection.declared``). Every hop
is a recorded field, so the chain is evidence, not inference. The tool
results the call read as messages (``tool.end``, matched by the call ids in
its recorded request) are on the chain too.

The pieces are then ranked by word overlap with the answer. That ranking is
correlational: it says what the answer resembles, never what caused it —
only a counterfactual re-run (remove the piece, run again) can say that.

A failed run may have no answer: its last model call raised (or never
returned), so it has an ``llm.start`` and no ``llm.end``. :func:`failing_custody`
walks back from that call the same way — its prompt's pieces, their admitting
events, their births, the tool results it read — ranked by overlap with the
error instead of an answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from footprint._errors import ConfigError, did_you_mean
from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    InjectionDeclared,
    LLMEnd,
    LLMStart,
    ToolEffect,
    ToolEnd,
    ToolStart,
)

__all__ = ["Custody", "Piece", "ToolRead", "answer_custody", "failing_custody", "overlap",
           "said"]

_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in",
    "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were",
    "will", "with", "you", "your", "i", "we", "our",
))


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1)


def overlap(a: str, b: str) -> float:
    """Set cosine of the content words of ``a`` and ``b`` (0 when either has none)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / math.sqrt(len(wa) * len(wb))


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One piece of the answering prompt, with the events that put it there."""

    landed: ContextInjected
    allowed: Event | None
    born: InjectionDeclared | None
    score: float

    @property
    def label(self) -> str:
        e = self.landed
        return f"{e.source} {e.injection_id!r}" if e.injection_id else e.source

    def allowed_text(self) -> str:
        a = self.allowed
        via = self.landed.admitted_via
        if a is None:
            return f"{via} (no admitting event recorded)"
        what = getattr(a, "type", "?")
        if isinstance(a, ContextEvaluated) and a.cursor_move is not None and via == "cursor":
            m = a.cursor_move
            what += f" cursor {m.from_skill or 'start'}→{m.to} by {m.by}"
        elif isinstance(a, ToolEnd):
            what += f" {a.tool_name} #{a.tool_call_id}"
        elif isinstance(a, ToolEffect):
            what += f" {a.kind} from {a.tool_name}"
        return f"{via} ({what}, seq {a.seq})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRead:
    """A tool result the answering call read as a message."""

    end: ToolEnd
    start: ToolStart | None
    score: float

    @property
    def label(self) -> str:
        return f"tool {self.end.tool_name} #{self.end.tool_call_id}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Custody:
    """The answer, the call that wrote it, and its prompt's pieces ranked by overlap.

    ``tools`` are the tool results the call read, ranked the same way;
    ``tools_from_request`` says whether they were read off the recorded
    request (``True``) or inferred as every earlier result of the run.
    """

    answer: str
    call: LLMStart
    pieces: tuple[Piece, ...]
    tools: tuple[ToolRead, ...] = ()
    tools_from_request: bool = True
    error: str | None = None
    """Set when ``call`` never replied (it raised, or has not returned): what ended it.
    ``answer`` is then empty and the ranking is by overlap with ``error``."""


def _call(events: Sequence[Event], step: str | None) -> tuple[LLMStart, LLMEnd] | None:
    ends = [e for e in events if isinstance(e, LLMEnd)]
    if not ends:
        return None
    if step is None:
        end = ends[-1]
    else:
        found = [e for e in ends if e.step_id == step]
        if not found:
            steps = [e.step_id for e in ends]
            raise ConfigError(f"step {step!r} is not a model call of this run"
                              f"{did_you_mean(step, steps)}; its model calls: {', '.join(steps)}")
        end = found[-1]
    start = next((e for e in events if isinstance(e, LLMStart) and e.step_id == end.step_id),
                 None)
    return (start, end) if start is not None else None


def _read_ids(start: LLMStart) -> set[str] | None:
    """The tool call ids whose results the recorded request carried (``None``: not kept)."""
    if not start.request_ref:
        return None
    try:
        messages = json.loads(start.request_ref).get("messages", [])
    except (ValueError, AttributeError):
        return None
    return {m["tool_call_id"] for m in messages
            if isinstance(m, dict) and m.get("role") == "tool" and "tool_call_id" in m}


def _tool_reads(events: Sequence[Event], start: LLMStart,
                answer: str) -> tuple[tuple[ToolRead, ...], bool]:
    ids = _read_ids(start)
    starts = {e.tool_call_id: e for e in events if isinstance(e, ToolStart)}
    reads = [ToolRead(end=e, start=starts.get(e.tool_call_id), score=overlap(e.result, answer))
             for e in events if isinstance(e, ToolEnd) and e.seq < start.seq
             and (ids is None or e.tool_call_id in ids)]
    reads.sort(key=lambda r: (-r.score, r.end.seq))
    return tuple(reads), ids is not None


def said(end: LLMEnd) -> str:
    """What a model call said: its text, or the tool calls it made when it wrote none."""
    if end.content:
        return end.content
    return "; ".join(f"{c.name}({json.dumps(dict(c.arguments), sort_keys=True)})"
                     for c in end.tool_calls)


def answer_custody(events: Sequence[Event], step: str | None = None) -> Custody | None:
    """Walk back from the run's last model call (or ``step``, e.g. ``llm#3``).

    ``None`` when the run made no model call; an unknown ``step`` is a ``ConfigError``.
    """
    final = _call(events, step)
    if final is None:
        return None
    start, end = final
    return _walk(events, start, said(end))


def failing_custody(events: Sequence[Event], step: str, error: str) -> Custody | None:
    """Walk back from model call ``step``, which raised or never returned (``error`` says
    what ended it): its custody as :func:`answer_custody` walks an answer's, the pieces
    ranked by overlap with ``error``. ``None`` when ``step`` has no ``llm.start``."""
    start = next((e for e in events if isinstance(e, LLMStart) and e.step_id == step), None)
    if start is None:
        return None
    return _walk(events, start, "", error=error)


def _walk(events: Sequence[Event], start: LLMStart, answer: str, *,
          error: str | None = None) -> Custody:
    """The custody of the call ``start``, its pieces ranked by overlap with ``answer`` (or,
    when it never replied, with ``error``)."""
    against = answer if error is None else error
    by_seq = {e.seq: e for e in events}
    born = {e.injection_id: e for e in events if isinstance(e, InjectionDeclared)}
    pieces = [
        Piece(landed=e, allowed=by_seq.get(e.admitted_by) if e.admitted_by is not None else None,
              born=born.get(e.injection_id or ""),
              score=overlap(e.raw_content or e.content_summary, against))
        for e in events
        if isinstance(e, ContextInjected) and e.iteration == start.iteration
        and e.slot != "tools" and e.seq < start.seq
    ]
    pieces.sort(key=lambda p: (-p.score, p.landed.position))
    tools, from_request = _tool_reads(events, start, against)
    return Custody(answer=answer, call=start, pieces=tuple(pieces), tools=tools,
                   tools_from_request=from_request, error=error)
