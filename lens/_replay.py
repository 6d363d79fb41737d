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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.events import EventBase, ListSink, RunStart, ToolEnd
from lens._cassette import PartDiff, ReplayDivergence, ReplayModel, ReplayTools
from lens._stream import (
    Decision,
    Divergence,
    clip,
    config_changes,
    decisions_of,
    divergence,
)

__all__ = ["ReplayReport", "ReplaySink", "render_replay", "replay"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    """What a replay found."""

    run_id: str
    compared: int
    recorded: int
    divergence: Divergence | None = None
    config_changes: tuple[str, ...] = ()
    request: tuple[str, tuple[PartDiff, ...]] | None = None
    stopped: str | None = None
    answer_expected: str = ""
    answer_got: str | None = None

    @property
    def identical(self) -> bool:
        return self.divergence is None and not self.config_changes and self.stopped is None


class ReplaySink(ListSink):
    """Keeps the replay's events and notes, as they arrive, the first divergent decision.

    It never raises into the run; the cassette asks :meth:`stop_reason`
    before serving the next call.
    """

    __slots__ = ("_expected", "_seen", "diverged_at")

    def __init__(self, expected: Sequence[Decision]) -> None:
        super().__init__()
        self._expected = list(expected)
        self._seen = 0
        self.diverged_at: int | None = None

    def emit(self, event: EventBase) -> None:
        super().emit(event)
        if getattr(event, "type", "") in ("run.configured", "skill.graph_declared",
                                          "injection.declared") or self.diverged_at is not None:
            return
        _, (got,) = decisions_of([event])  # type: ignore[list-item]
        i = self._seen
        self._seen += 1
        if i >= len(self._expected) or self._expected[i].key != got.key:
            self.diverged_at = i

    def stop_reason(self) -> str | None:
        if self.diverged_at is None:
            return None
        return f"decision {self.diverged_at} differs from the recording"


def _check_recording(events: Sequence[EventBase]) -> RunStart:
    start = next((e for e in events if isinstance(e, RunStart)), None)
    if start is None:
        raise ConfigError("the run has no run.start event, so there is nothing to replay; "
                          "pick a complete run (see `footprint runs`)")
    if start.turn != 0:
        raise ConfigError(f"run {start.run_id!r} is turn {start.turn} of a conversation; "
                          "replay re-runs first turns only — replay the conversation's first run")
    for e in events:
        if isinstance(e, ToolEnd) and e.result.startswith(("[redacted sha256:", "[sha256:")):
            raise ConfigError(f"tool result of {e.step_id} was redacted ({clip(e.result, 30)}); "
                              "replay needs tool results: record with capture level 'full'")
    return start


def replay(events: Sequence[Any], agent: Any) -> ReplayReport:
    """Re-run ``agent`` on the recorded run's message against the recording as a cassette.

    ``agent`` must offer ``variant(**overrides)`` (an ``Agent`` does).
    """
    start = _check_recording(events)
    declared, recorded = decisions_of(events)
    sink = ReplaySink(recorded)
    model = ReplayModel(events, gate=sink.stop_reason)
    tools = ReplayTools(events, gate=sink.stop_reason)
    if not hasattr(agent, "variant"):
        raise ConfigError(f"replay needs an Agent (with variant()) to serve the recording; "
                          f"got {type(agent).__name__}")
    cassette = agent.variant(model_source=model, tool_source=tools, sink=sink)
    stopped: str | None = None
    answer: str | None = None
    try:
        answer = cassette.run_sync(start.user_message).answer
    except ReplayDivergence as exc:
        stopped = str(exc)
    except RunError as exc:  # the changed agent failed on its own: report, do not crash
        stopped = f"the replayed run failed: {exc}"
    got_declared, got = decisions_of(sink.events)  # type: ignore[arg-type]
    end = [e for e in events if getattr(e, "type", "") == "run.end"]
    return ReplayReport(
        run_id=start.run_id, compared=len(got), recorded=len(recorded),
        divergence=divergence(recorded, got), config_changes=config_changes(declared, got_declared),
        request=model.mismatch, stopped=stopped,
        answer_expected=getattr(end[-1], "final_content", "") if end else "",
        answer_got=answer)


def render_replay(report: ReplayReport) -> list[str]:
    """The report as text lines."""
    if report.identical:
        return [f"replay of {report.run_id}: identical — {report.compared} decisions "
                "re-made offline from the recording, none differs",
                f"answer: {clip(report.answer_got, 100)}"]
    lines = [f"replay of {report.run_id}: DIVERGED"]
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
