"""Replay: re-execute a recorded run offline and check it decides the same way.

The agent is rebuilt with the recording as its cassette (``ReplayModel``
answers the model calls, ``ReplayTools`` the plain tool calls) and a sink
that compares every event it emits, as it is emitted, with the recorded
decision stream. The first decision that differs stops the replay at the
next model or tool call, and the report names it: where (seq, step,
iteration), what the recording expected and what happened — and, when a
model request was not in the recording, which part of it differs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.events import EventBase, ListSink, LLMEnd, RunFailed, RunStart, ToolEnd
from lens.playback._cassette import (
    PartDiff,
    ReplayDivergence,
    ReplayModel,
    ReplayTools,
    redacted_digest,
)
from lens.playback._redacted import matches, parse_marker, require_key
from lens.playback._stream import (
    DECLARATION_TYPES,
    Decision,
    Divergence,
    clip,
    config_changes,
    decisions_of,
    divergence,
)

__all__ = [
    "ReplayReport",
    "ReplaySink",
    "check_recording",
    "deterministic_tools",
    "render_replay",
    "replay",
    "replay_turn",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    """What the replay of one recorded run (one turn) found."""

    run_id: str
    compared: int
    recorded: int
    divergence: Divergence | None = None
    config_changes: tuple[str, ...] = ()
    request: tuple[str, tuple[PartDiff, ...]] | None = None
    stopped: str | None = None
    answer_expected: str = ""
    answer_got: str | None = None
    turn: int = 0
    tools_rerun: int = 0

    @property
    def identical(self) -> bool:
        return self.divergence is None and not self.config_changes and self.stopped is None


def _unredacted(got: Decision, expected: Decision) -> Decision:
    """``got`` with each value the recording kept only as a hash marker put back as that marker
    when the replayed value hashes to it, so a redacted recording compares equal."""
    fields = dict(got.fields)
    changed = False
    for name, value in expected.fields.items():
        mine = fields.get(name)
        if isinstance(mine, str) and matches(value, mine):
            fields[name] = value
            changed = True
    return replace(got, fields=fields) if changed else got


class ReplaySink(ListSink):
    """Keeps the replay's events and notes, as they arrive, the first divergent decision.

    It never raises into the run; the cassette asks :meth:`stop_reason`
    before serving the next call. A decision whose recorded value is a
    redaction marker is compared by hash (:func:`_unredacted`).
    """

    __slots__ = ("_expected", "decisions", "diverged_at")

    def __init__(self, expected: Sequence[Decision]) -> None:
        super().__init__()
        self._expected = list(expected)
        self.decisions: list[Decision] = []
        self.diverged_at: int | None = None

    def emit(self, event: EventBase) -> None:
        super().emit(event)
        if getattr(event, "type", "") in DECLARATION_TYPES:
            return
        _, (got,) = decisions_of([event])  # type: ignore[list-item]
        i = len(self.decisions)
        if i < len(self._expected):
            got = _unredacted(got, self._expected[i])
        self.decisions.append(got)
        if self.diverged_at is None and (
                i >= len(self._expected) or self._expected[i].key != got.key):
            self.diverged_at = i

    def stop_reason(self) -> str | None:
        if self.diverged_at is None:
            return None
        return f"decision {self.diverged_at} differs from the recording"


def _redacted(value: str) -> bool:
    return redacted_digest(value) is not None


def check_recording(events: Sequence[EventBase], deterministic: Collection[str]) -> RunStart:
    """The run's ``run.start``; a run that cannot be replayed is a one-line ``ConfigError``."""
    start = next((e for e in events if isinstance(e, RunStart)), None)
    if start is None:
        raise ConfigError("the run has no run.start event, so there is nothing to replay; "
                          "pick a complete run (see `footprint runs`)")
    if _redacted(start.user_message):
        raise ConfigError(f"the person's message of run {start.run_id!r} was redacted; replay "
                          "needs it: record with capture level 'full'")
    for e in events:
        if isinstance(e, LLMEnd) and _redacted(e.content):
            raise ConfigError(f"the model response of {e.step_id} was redacted "
                              f"({clip(e.content, 30)}); replay serves recorded responses: "
                              "record model output with capture level 'full'")
    hidden = sorted({e.tool_name for e in events
                     if isinstance(e, ToolEnd) and _redacted(e.result)} - set(deterministic))
    for e in events:  # a redacted result re-run is checked against its marker: by its key
        marker = parse_marker(e.result) if isinstance(e, ToolEnd) else None
        if marker is not None and isinstance(e, ToolEnd) and e.tool_name in deterministic:
            require_key(marker, f"the recorded result of tool {e.tool_name!r}")
    if hidden:
        names = ", ".join(repr(n) for n in hidden)
        raise ConfigError(
            f"the recorded results of tool(s) {names} were redacted and replay cannot re-run "
            f"them: declare each deterministic (tool({hidden[0]}, deterministic=True)) so "
            "replay re-runs it and checks the recorded hash, or record with capture level 'full'")
    return start


def deterministic_tools(agent: Any) -> frozenset[str]:
    """The names of ``agent``'s tools declared ``deterministic`` (re-run when redacted)."""
    setup = getattr(agent, "setup", None)
    if setup is None:
        return frozenset()
    tools = [*setup.baseline_tools.items(), *((n, t) for n, (t, _) in setup.skill_tools.items())]
    return frozenset(n for n, t in tools if getattr(t, "deterministic", False))


def _labels(start: RunStart) -> dict[str, Any]:
    """The run's caller labels, passed again so ``run.start`` is re-made as recorded."""
    return {"user": start.user_id, "session": start.session_id, "tags": start.tags,
            "metadata": dict(start.metadata) or None}


def replay(events: Sequence[Any], agent: Any, *,
           continue_from: Mapping[str, Any] | None = None) -> ReplayReport:
    """Re-run ``agent`` on one recorded run's message against the recording as a cassette.

    ``agent`` must offer ``variant(**overrides)`` (an ``Agent`` does). A run
    that is turn k of a conversation needs ``continue_from``: the conversation
    as it stood before turn k (see :mod:`lens.playback._conversation`, which replays
    whole conversations).
    """
    return replay_turn(events, agent, continue_from=continue_from)[0]


def replay_turn(events: Sequence[Any], agent: Any, *,
                continue_from: Mapping[str, Any] | None = None,
                ) -> tuple[ReplayReport, dict[str, Any] | None]:
    """:func:`replay`, plus the conversation checkpoint after the turn (``None`` if it failed)."""
    if not hasattr(agent, "variant"):
        raise ConfigError(f"replay needs an Agent (with variant()) to serve the recording; "
                          f"got {type(agent).__name__}")
    rerun = deterministic_tools(agent)
    start = check_recording(events, rerun)
    declared, recorded = decisions_of(events)
    sink = ReplaySink(recorded)
    model = ReplayModel(events, gate=sink.stop_reason)
    tools = ReplayTools(events, gate=sink.stop_reason, rerun=rerun)
    cassette = agent.variant(model_source=model, tool_source=tools, sink=sink)
    stopped: str | None = None
    answer: str | None = None
    checkpoint: dict[str, Any] | None = None
    try:
        answer = cassette.run_sync(start.user_message, continue_from=continue_from,
                                   **_labels(start)).answer
        checkpoint = cassette.checkpoint()
    except ReplayDivergence as exc:
        stopped = str(exc)
    except RunError as exc:  # failed as recorded (compared below), or on its own: report
        if not any(isinstance(e, RunFailed) for e in events):
            stopped = f"the replayed run failed: {exc}"
    got_declared, _ = decisions_of(sink.events)  # type: ignore[arg-type]
    end = [e for e in events if getattr(e, "type", "") == "run.end"]
    report = ReplayReport(
        run_id=start.run_id, compared=len(sink.decisions), recorded=len(recorded),
        divergence=divergence(recorded, sink.decisions),
        config_changes=config_changes(declared, got_declared),
        request=model.mismatch, stopped=stopped,
        answer_expected=getattr(end[-1], "final_content", "") if end else "",
        answer_got=answer, turn=start.turn, tools_rerun=tools.reran)
    return report, checkpoint


def render_replay(report: ReplayReport) -> list[str]:
    """The report as text lines."""
    if report.identical:
        return [f"replay of {report.run_id}: identical — {report.compared} decisions "
                "re-made offline from the recording, none differs",
                f"answer: {clip(report.answer_got, 100)}"]
    where = f" (turn {report.turn} of its conversation)" if report.turn else ""
    lines = [f"replay of {report.run_id}{where}: DIVERGED"]
    if report.config_changes:
        lines.append("configuration changed (- recorded, + replayed):")
        lines += [f"  {c}" for c in report.config_changes]
    d = report.divergence
    if d is not None:
        lines += [f"first divergent decision: seq {d.expected_seq} recorded / "
                  f"{d.got_seq} replayed · {d.step} · iteration {d.iteration}",
                  f"  expected: {d.expected}", f"  got:      {d.got}"]
        lines += [f"  {f}" for f in d.fields]
    if report.request is not None:
        step, parts = report.request
        lines.append(f"model request at {step} is not in the recording; it differs in:")
        for p in parts:
            lines += [f"  {p.part}: {p.detail}", f"    recorded: {p.expected}",
                      f"    replayed: {p.got}"]
    if report.stopped:
        lines.append(f"stopped: {report.stopped}")
    lines.append(f"answer recorded: {clip(report.answer_expected, 90)}")
    if report.answer_got is not None:
        lines.append(f"answer replayed: {clip(report.answer_got, 90)}")
    return lines
