"""The answer's causal past, walked loop-aware from the recorded events alone.

From the explained model call: every piece that landed in its prompt (all
three slots), every tool result its request carried, back from each result
to the model call that chose the tool, and on to *that* call's prompt and
results — until no call is left. Messages of the request older than this
turn's person message are the conversation's history (earlier turns).

The explained step is the run's last model call unless ``step`` names one.
A run that failed (``run.error``) or never ended (killed) is flagged, and
its last model call is the one explained: a re-run is compared there.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from footprint._errors import ConfigError, did_you_mean
from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    LLMEnd,
    LLMStart,
    RunEnd,
    RunFailed,
    RunStart,
    ToolEnd,
)
from lens.explain._custody import said
from lens.explain._outcome import FAILED, STOPPED
from lens.explain._tier import Tier, Words
from lens.playback._answer import answer_flags

__all__ = [
    "Call",
    "HistoryMessage",
    "Landing",
    "Past",
    "RunStatus",
    "causal_past",
    "landings_of",
    "moves_of",
    "request_messages",
]

RunStatus = Literal["answered", "stopped-early", "failed", "incomplete"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One model call on the path to the answer.

    ``reads`` are the tool results its request carried (filled for the
    explained call; an earlier call read the prefix of them before it).
    """

    start: LLMStart
    reads: tuple[str, ...]
    reads_known: bool

    @property
    def step_id(self) -> str:
        return self.start.step_id


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryMessage:
    """A message of an earlier turn that the explained call's request carried."""

    index: int
    role: str
    content: str
    tool_call_id: str | None = None
    calls: tuple[str, ...] = ()
    """The ids of the tool calls an assistant message made (how its reply is found)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Past:
    """Everything the explained answer could depend on, as recorded."""

    run_id: str
    turn: int
    user_message: str
    conversation_id: str | None
    explained: Call
    answer: str
    status: RunStatus
    final: bool
    calls: tuple[Call, ...]
    history: tuple[HistoryMessage, ...] = ()
    flags: tuple[str, ...] = ()
    by_seq: Mapping[int, Event] = field(default_factory=dict)
    failed: bool = False
    """The run gave no answer (a model call raised, or a limit stopped it): its outcome is
    that failure (``answer`` is :data:`FAILED` or :data:`STOPPED`), a trial that fails the
    same way reproduces it and one that answers is a fix."""
    error: str = ""
    """The run's error message when the explained call raised (what pieces are ranked by)."""

    @property
    def ranked_by(self) -> str:
        """The text candidates are ranked against: the error of a failed call, else the
        answer."""
        return self.error or self.answer

    @property
    def path_steps(self) -> frozenset[str]:
        return frozenset(c.step_id for c in self.calls)


def request_messages(start: LLMStart) -> list[dict[str, Any]] | None:
    """The recorded request's messages (``None`` when the request text was not kept)."""
    if not start.request_ref:
        return None
    try:
        messages = json.loads(start.request_ref).get("messages")
    except (ValueError, AttributeError):
        return None
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else None


def _explained(ends: Sequence[LLMEnd], step: str | None) -> LLMEnd:
    if step is None:
        return ends[-1]
    found = [e for e in ends if e.step_id == step]
    if not found:
        steps = [e.step_id for e in ends]
        raise ConfigError(f"step {step!r} is not a model call of this run"
                          f"{did_you_mean(step, steps)}; its model calls: {', '.join(steps)}")
    return found[-1]


def _failed_flag(err: RunFailed, then: str) -> str:
    return (f"run-failed: the run raised {err.error_type} at {err.step_id} "
            f"({err.message[:60]}); {then}")


def _status(events: Sequence[Event], *, outcome: bool) -> tuple[RunStatus, list[str]]:
    """The run's status and its flag; ``outcome``: a run stopped unanswered is explained
    as that outcome (a re-run that answers fixes it), not from its last reply."""
    err = next((e for e in events if isinstance(e, RunFailed)), None)
    if err is not None:
        return "failed", [_failed_flag(err, "explaining its last model call")]
    end = next((e for e in events if isinstance(e, RunEnd)), None)
    if end is None:
        return "incomplete", ["run-incomplete: the run never ended (killed or still running); "
                              "explaining its last recorded model call"]
    if end.stopped_early:
        then = "a re-run that answers is a fix" if outcome else "explaining its last model call"
        return "stopped-early", [f"run-stopped-early: the run hit {end.stopped_early} without "
                                 f"an answer of its own; {then}"]
    return "answered", []


def _history(start: LLMStart, user_message: str, turn: int) -> tuple[HistoryMessage, ...]:
    messages = request_messages(start)
    if turn == 0 or not messages:
        return ()
    mine = max((i for i, m in enumerate(messages)
                if m.get("role") == "user" and m.get("content") == user_message), default=None)
    if mine is None:
        return ()
    return tuple(HistoryMessage(index=i, role=str(m.get("role")),
                                content=str(m.get("content") or ""),
                                tool_call_id=m.get("tool_call_id"), calls=_call_ids(m))
                 for i, m in enumerate(messages[:mine]))


def _call_ids(message: dict[str, Any]) -> tuple[str, ...]:
    calls = message.get("tool_calls")
    return tuple(str(c["id"]) for c in calls if isinstance(c, dict) and "id" in c) \
        if isinstance(calls, list) else ()


def _explained_reads(start: LLMStart, results: Sequence[ToolEnd]) -> tuple[list[str], bool]:
    messages = request_messages(start)
    if messages is None:
        return [e.tool_call_id for e in results if e.seq < start.seq], False
    return [str(m["tool_call_id"]) for m in messages
            if m.get("role") == "tool" and "tool_call_id" in m], True


def _walk(events: Sequence[Event], explained: LLMStart) -> tuple[Call, ...]:
    """The explained call and every call that chose a tool whose result it read.

    A run's history only grows, so each earlier call read a prefix of what
    the explained call read, and the calls that chose those tools are the
    choosers of the explained call's own reads: only its request is parsed.
    """
    starts = {e.step_id: e for e in events if isinstance(e, LLMStart)}
    results = [e for e in events if isinstance(e, ToolEnd)]
    chooser = {e.tool_call_id: e.parent_step for e in results if e.parent_step}
    for e in events:
        if isinstance(e, LLMEnd):
            for c in e.tool_calls:
                chooser.setdefault(c.id, e.step_id)
    reads, known = _explained_reads(explained, results)
    calls = {explained.step_id: Call(start=explained, reads=tuple(reads), reads_known=known)}
    for r in reads:
        step = chooser.get(r)
        if step is not None and step not in calls and step in starts:
            calls[step] = Call(start=starts[step], reads=(), reads_known=known)
    return tuple(sorted(calls.values(), key=lambda c: c.start.seq))


def _nothing_to_explain(events: Sequence[Event], started: bool, words: Words) -> str:
    """Why no trial can explain the run: no ``run.start``, no model call, or a model call
    that failed before it replied (there is no answer to compare trials with)."""
    failed = next((e.step_id for e in reversed(events) if isinstance(e, LLMStart)), None)
    if started and failed is not None:
        return (f"model call {failed} failed before it replied (no llm.end), so the run has "
                f"no answer for {words.trials} to change; `footprint show RUN` and the lens "
                "why screen explain the failure from that call")
    return ("the run has no model call (or no run.start) to explain; pick a run that "
            "answered (see `footprint runs`)")


def causal_past(events: Sequence[Event], step: str | None = None,
                words: Words = Tier.RERUN.words, *, failure: bool = True) -> Past:
    """Walk back from ``step`` (default: the call that raised on a failed run, else the last
    model call); a ``ConfigError`` when none. ``words``: the tier's, for the messages and
    flags that name its trials; ``failure=False``: never explain a failure (the re-send
    tier, whose sends that raise say the provider is wrong)."""
    run_start = next((e for e in events if isinstance(e, RunStart)), None)
    ends = [e for e in events if isinstance(e, LLMEnd)]
    failing = _failing_call(events) if step is None and failure else None
    if run_start is not None and failing is not None:
        return _failed_past(events, run_start, failing)
    if run_start is None or not ends:
        raise ConfigError(_nothing_to_explain(events, run_start is not None, words))
    explained_end = _explained(ends, step)
    status, flags = _status(events, outcome=failure and step is None)
    explained_start = next((e for e in events if isinstance(e, LLMStart)
                            and e.step_id == explained_end.step_id), None)
    if explained_start is None:
        raise ConfigError(f"model call {explained_end.step_id} has no llm.start in the "
                          "recording; pick another --step")
    calls = _walk(events, explained_start)
    explained = next(c for c in calls if c.step_id == explained_end.step_id)
    if not explained.reads_known:
        flags.append("no-request-record: the request text was not kept, so every earlier "
                     "tool result is taken as read")
    flags += answer_flags(explained_end)
    final = step is None or explained_end.step_id == ends[-1].step_id
    stopped = failure and step is None and status == "stopped-early"  # the outcome
    if step is not None and status == "answered" and not final:
        flags.append(f"intermediate-step: explaining {explained_end.step_id}, not the final "
                     f"answer ({ends[-1].step_id}); {words.trials} are compared there")
    return Past(
        run_id=run_start.run_id, turn=run_start.turn, user_message=run_start.user_message,
        conversation_id=run_start.conversation_id, explained=explained,
        answer=STOPPED if stopped else said(explained_end), status=status,
        final=final and status == "answered", calls=calls,
        history=_history(explained.start, run_start.user_message, run_start.turn),
        flags=tuple(flags), by_seq={e.seq: e for e in events}, failed=stopped)


def _failing_call(events: Sequence[Event]) -> LLMStart | None:
    """The model call that raised before it replied, when the run failed there (the run's
    last call, with no ``llm.end``)."""
    if not any(isinstance(e, RunFailed) for e in events):
        return None
    last = next((e for e in reversed(events) if isinstance(e, LLMStart)), None)
    if last is None or any(isinstance(e, LLMEnd) and e.step_id == last.step_id
                           for e in events):
        return None
    return last


def _failed_past(events: Sequence[Event], run_start: RunStart, start: LLMStart) -> Past:
    """The past of a run whose model call raised: the failure is the outcome."""
    err = next(e for e in events if isinstance(e, RunFailed))
    calls = _walk(events, start)
    explained = next(c for c in calls if c.step_id == start.step_id)
    flags = [_failed_flag(err, f"{start.step_id} never replied, so its outcome is the "
                               "failure: a trial that fails there too reproduces it")]
    if not explained.reads_known:
        flags.append("no-request-record: the request text was not kept, so every earlier "
                     "tool result is taken as read")
    return Past(
        run_id=run_start.run_id, turn=run_start.turn, user_message=run_start.user_message,
        conversation_id=run_start.conversation_id, explained=explained,
        answer=FAILED, status="failed", final=False, calls=calls,
        history=_history(start, run_start.user_message, run_start.turn), flags=tuple(flags),
        by_seq={e.seq: e for e in events}, failed=True, error=err.message)


class Landing(NamedTuple):
    """A piece landing in the prompt of a call on the path.

    ``piece`` carries the text (from a store it is one decoded landing of
    the same content, standing for all of them); ``seq``, ``admitted_by``
    and ``admitted_via`` are this landing's own.
    """

    seq: int
    step: str
    piece: ContextInjected
    admitted_by: int | None
    admitted_via: str


def call_of(seqs: Sequence[int], steps: Sequence[str], seq: int) -> str | None:
    """The model call whose prompt an event at ``seq`` belongs to (the next call after it)."""
    i = bisect.bisect_right(seqs, seq)
    return steps[i] if i < len(steps) else None


def landings_of(events: Sequence[Event], past: Past) -> list[Landing]:
    """Every piece that landed in a prompt on the path, with the call it landed in."""
    starts = sorted((e.seq, e.step_id) for e in events if isinstance(e, LLMStart))
    seqs = [s for s, _ in starts]
    steps = [st for _, st in starts]
    path = past.path_steps
    out: list[Landing] = []
    for e in events:
        if isinstance(e, ContextInjected):
            step = call_of(seqs, steps, e.seq)
            if step is not None and step in path:
                out.append(Landing(e.seq, step, e, e.admitted_by, e.admitted_via))
    return out


def moves_of(events: Sequence[Event], past: Past) -> list[ContextEvaluated]:
    """The cursor moves of the iterations on the path (``none`` moves left out)."""
    iterations = {c.start.iteration for c in past.calls}
    return [e for e in events if isinstance(e, ContextEvaluated) and e.cursor_move is not None
            and e.cursor_move.by != "none" and e.iteration in iterations
            and e.seq < past.explained.start.seq]
