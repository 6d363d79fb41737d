"""Whole conversations: re-run turn k of a recorded conversation *as that conversation*.

A follow-up turn (``agent.follow_up`` or ``run(..., continue_from=)``) is
one run of its own in the store, with ``turn = k`` and the conversation's id
on its ``run.start``. Re-running it as a new conversation drops the history
the model saw, so it neither replays nor explains. This module is the one
place that restores the earlier turns:

- :func:`conversation_of` finds turns 0…k of the conversation a run belongs
  to, in a store, a snapshot folder or a plain list of events;
- :func:`restore_conversation` replays turns 0…k-1 from their recordings
  (model responses, the decider's pick and tool results served from the
  cassette) on a given agent, checks every decision on the way, and returns
  the conversation's checkpoint just before turn k;
- :func:`restore_turn` does both and hands back a :class:`RestoredTurn`
  whose ``run(agent)`` re-runs turn k, on any variant of the agent, with the
  recorded history in place (``agent.run_sync(message, continue_from=…)``),
  and whose ``rerun(agent)`` does so cheaply: recorded model responses are
  reused up to the first request that differs (calls served and made are
  counted);
- :func:`replay_conversation` replays every turn against its recording and
  stops at the first turn that diverges (what ``lens.replay`` reports).

A caller re-running turn k with a *changed* agent (an ablation) restores the
earlier turns with the recorded agent and runs the change on turn k only::

    restored = restore_turn(store, run_id, baseline_agent)
    result = restored.run(baseline_agent.without("some-fact"))

When two runs continue the same turn (two branches from one checkpoint), the
latest one that started before run k is taken as the earlier turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from footprint._errors import ConfigError, RunError
from footprint.events import Event, ListSink, RunStart
from lens.playback._cassette import LiveModels, ReplayModel, ReplayTools
from lens.playback._replay import ReplayReport, render_replay, replay_turn
from lens.playback._stream import clip
from recorder.store._runref import resolve_ref

if TYPE_CHECKING:
    from footprint.agent import RunResult

__all__ = [
    "ConversationReplay",
    "RecordedTurn",
    "Rerun",
    "RestoredTurn",
    "conversation_of",
    "events_of",
    "render_conversation",
    "replay_conversation",
    "resolve_run",
    "restore_conversation",
    "restore_turn",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedTurn:
    """One recorded turn: its run id, its number, the person's message, and its events."""

    run_id: str
    turn: int
    conversation_id: str | None
    user_message: str
    events: tuple[Event, ...]


# ── where the events come from ───────────────────────────────────────────────


def _grouped(events: Sequence[Event]) -> dict[str, list[Event]]:
    runs: dict[str, list[Event]] = {}
    for e in events:
        runs.setdefault(e.run_id, []).append(e)
    return runs


def _starts(source: Any) -> list[tuple[str, int, str | None]]:
    """``(run_id, turn, conversation_id)`` of every run, oldest first."""
    if hasattr(source, "starts"):  # a snapshot folder (lens.playback._snapshot.Recording)
        return list(source.starts())
    if hasattr(source, "rows") and hasattr(source, "run_ids"):  # a recorder Store
        rows = source.rows("SELECT run_id, turn, json_extract_string(payload, "
                           "'$.conversation_id') FROM events WHERE type = 'run.start'")
        found = {str(r[0]): (int(r[1]), r[2]) for r in rows}
        return [(rid, *found[rid]) for rid in source.run_ids() if rid in found]
    if isinstance(source, Sequence):
        return [(e.run_id, e.turn, e.conversation_id) for e in source
                if isinstance(e, RunStart)]
    raise ConfigError(f"cannot read runs from {type(source).__name__}; pass a store "
                      "(lens.open_store(path)), a snapshot folder or a list of events")


def events_of(source: Any, run_id: str) -> tuple[Event, ...]:
    """The events of one run of ``source`` (a store, a recording or a list of events)."""
    if hasattr(source, "events") and callable(source.events):
        return tuple(source.events(run_id))
    return tuple(_grouped(source).get(run_id, ()))


def resolve_run(source: Any, ref: str) -> str:
    """A full run id from a full id, a unique prefix or ``last`` (a store's rules)."""
    if hasattr(source, "resolve_run"):
        return str(source.resolve_run(ref))
    ids = [rid for rid, _, _ in _starts(source)]
    return resolve_ref(ref, ids, where="the events (no run.start among them)" if not ids
                       else "the events", hint="pass one of their run ids, or `last`")


def _turn(source: Any, run_id: str) -> RecordedTurn:
    events = events_of(source, run_id)
    start = next((e for e in events if isinstance(e, RunStart)), None)
    if start is None:
        raise ConfigError(f"run {run_id!r} has no run.start event; pick a complete run "
                          "(see `footprint runs`)")
    return RecordedTurn(run_id=run_id, turn=start.turn, conversation_id=start.conversation_id,
                        user_message=start.user_message, events=events)


def conversation_of(source: Any, run: str) -> tuple[RecordedTurn, ...]:
    """Turns 0…k of the conversation whose turn k is ``run``, oldest first.

    ``source`` is a recorder ``Store``, a snapshot folder (``Recording``) or
    a sequence of events holding the runs. A missing earlier turn is a
    ``ConfigError`` naming it.
    """
    run_id = resolve_run(source, run)
    last = _turn(source, run_id)
    if last.turn == 0:
        return (last,)
    starts = _starts(source)
    before = starts[: next(i for i, s in enumerate(starts) if s[0] == run_id)]
    picked: dict[int, str] = {}
    for rid, turn, conv in before:
        if conv == last.conversation_id and turn < last.turn:
            picked[turn] = rid  # the latest run of each earlier turn wins
    missing = [t for t in range(last.turn) if t not in picked]
    if missing:
        raise ConfigError(
            f"run {run_id!r} is turn {last.turn} of conversation {last.conversation_id!r}, "
            f"but turn(s) {missing} are not in the recording; a follow-up replays only with "
            "its earlier turns (record or snapshot the whole conversation)")
    return (*(_turn(source, picked[t]) for t in range(last.turn)), last)


# ── restoring and replaying ─────────────────────────────────────────────────


def _checked(report: ReplayReport, checkpoint: dict[str, Any] | None) -> dict[str, Any]:
    if checkpoint is None or not report.identical:
        why = "\n".join(render_replay(report)[:6]).replace("\n", "; ")
        raise RunError(f"turn {report.turn} of the conversation (run {report.run_id}) did not "
                       f"replay as recorded, so turn {report.turn + 1} cannot be restored: "
                       f"{why}")
    return checkpoint


def restore_conversation(agent: Any,
                         earlier: Sequence[RecordedTurn]) -> dict[str, Any] | None:
    """Replay ``earlier`` turns on ``agent`` from their recordings; the checkpoint after them.

    Every model response, decider pick and tool result is served from the
    recording, and each turn must make its recorded decisions again (a
    ``RunError`` names the first turn that does not). The result is what
    ``agent.run(message, continue_from=…)`` takes; ``None`` when ``earlier``
    is empty (turn 0 starts a new conversation).
    """
    checkpoint: dict[str, Any] | None = None
    for turn in earlier:
        report, after = replay_turn(turn.events, agent, continue_from=checkpoint)
        checkpoint = _checked(report, after)
    return checkpoint


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoredTurn:
    """Turn k of a recorded conversation, ready to run again with its history in place."""

    recorded: RecordedTurn
    earlier: tuple[RecordedTurn, ...]
    continue_from: Mapping[str, Any] | None

    @property
    def message(self) -> str:
        """The person's message of turn k."""
        return self.recorded.user_message

    def run(self, agent: Any) -> RunResult:
        """Run turn k on ``agent`` (any variant) as the recorded conversation's next turn."""
        result: RunResult = agent.run_sync(self.message, continue_from=self.continue_from)
        return result

    async def run_async(self, agent: Any) -> RunResult:
        """:meth:`run` for code inside an event loop."""
        result: RunResult = await agent.run(self.message, continue_from=self.continue_from)
        return result

    def rerun(self, agent: Any) -> Rerun:
        """Run turn k on ``agent`` reusing the recording: a cheap re-run.

        Model responses (and the decider's pick) are served from turn k's
        recording while the requests match it; from the first request that
        differs, ``agent``'s own models answer (every later call too). Tool
        calls with recorded arguments get their recorded result; others run.
        The :class:`Rerun` counts the model calls served and made. A serving
        from the recording repeats the recorded sample: re-run live
        (:meth:`run`) where sampling noise matters.
        """
        sink = ListSink()
        model = ReplayModel(self.recorded.events, fallback=LiveModels(agent))
        runner = agent.variant(model_source=model, sink=sink,
                               tool_source=ReplayTools(self.recorded.events, live=True))
        result: RunResult | None = None
        error: str | None = None
        try:
            result = runner.run_sync(self.message, continue_from=self.continue_from)
        except RunError as exc:
            error = f"{type(exc).__name__}: {exc}"
        return Rerun(result=result, error=error, events=tuple(sink.events),  # type: ignore[arg-type]
                     model_calls_served=model.served, model_calls_made=model.called)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rerun:
    """One cheap re-run of a turn: its result (or the error it ended on), events and savings."""

    result: RunResult | None
    error: str | None
    events: tuple[Event, ...]
    model_calls_served: int
    model_calls_made: int


def restore_turn(source: Any, run: str, agent: Any) -> RestoredTurn:
    """Find ``run``'s conversation in ``source`` and restore the turns before it on ``agent``.

    ``agent`` should be the agent that made the recording (the earlier turns
    must replay as recorded); run the changed agent on the result.
    """
    turns = conversation_of(source, run)
    return RestoredTurn(recorded=turns[-1], earlier=turns[:-1],
                        continue_from=restore_conversation(agent, turns[:-1]))


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationReplay:
    """Every turn replayed up to the first that diverged: one report per turn replayed."""

    run_id: str
    turn: int
    turns: tuple[ReplayReport, ...]

    @property
    def identical(self) -> bool:
        return all(r.identical for r in self.turns)

    @property
    def last(self) -> ReplayReport:
        """The report that decides: the first divergent turn's, else the run's own."""
        return next((r for r in self.turns if not r.identical), self.turns[-1])


def replay_conversation(source: Any, run: str, agent: Any) -> ConversationReplay:
    """Replay turns 0…k of ``run``'s conversation on ``agent``; stop at the first divergence."""
    turns = conversation_of(source, run)
    reports: list[ReplayReport] = []
    checkpoint: dict[str, Any] | None = None
    for turn in turns:
        report, checkpoint = replay_turn(turn.events, agent, continue_from=checkpoint)
        reports.append(report)
        if not report.identical or checkpoint is None:
            break
    return ConversationReplay(run_id=turns[-1].run_id, turn=turns[-1].turn, turns=tuple(reports))


def render_conversation(result: ConversationReplay) -> list[str]:
    """The replay as text lines: one line per earlier turn, then the deciding turn's report."""
    if result.turn == 0:
        return render_replay(result.turns[0])
    lines = [f"turn {r.turn} ({r.run_id}): identical — {r.compared} decisions"
             for r in result.turns if r is not result.last]
    report = result.last
    if report.identical:
        total = sum(r.compared for r in result.turns)
        return [f"replay of {result.run_id}: identical — {len(result.turns)} turns, {total} "
                "decisions re-made offline from the recording, none differs", *lines,
                f"answer: {clip(report.answer_got, 100)}"]
    head = (f"replay of {result.run_id} (turn {result.turn} of its conversation): DIVERGED "
            f"at turn {report.turn}")
    return [head, *lines, *render_replay(report)]
