"""The lens's Python API: replay a recorded run, diff two runs, assert a recording in a test.

Every function takes the recording as ``store``: a ``Store`` from
:func:`open_store`, a path to a store directory or to a recording folder
(``footprint snapshot``), or a sequence of events (a ``ListSink``'s). The
agent is an ``Agent``, a factory returning one, or a ``"MODULE:FACTORY"``
string.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError
from lens.playback._cassette import PartDiff
from lens.playback._conversation import (
    ConversationReplay,
    conversation_of,
    events_of,
    render_conversation,
    replay_conversation,
    resolve_run,
)
from lens.playback._decisions import rerun_decisions
from lens.playback._diff import RunDiff, diff_runs
from lens.playback._files import write_text_safely
from lens.playback._replay import ReplayReport
from lens.playback._snapshot import DECISIONS, Recording, is_recording
from lens.playback._source import StoreLike, agent_of, opened
from lens.playback._stream import Divergence

__all__ = ["ReplayResult", "assert_decisions", "assert_replays", "diff", "replay"]

@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayResult:
    """What replaying a recorded run (every turn of its conversation) found.

    ``identical`` is true when every recorded decision was made again.
    ``run_turn`` is the run's turn in its conversation and ``turns`` how many
    turns were replayed. Otherwise ``turn`` is the first turn that diverged, ``divergence`` its
    first differing decision (what the recording expected, what the replay
    did), and ``request_diff`` the parts of the first model request the
    recording did not hold (system prompt, messages, tools…), with excerpts.
    ``str(result)`` is the readable report.
    """

    run_id: str
    identical: bool
    turns: int
    turn: int
    run_turn: int
    decisions: int
    divergence: Divergence | None
    request_step: str | None
    request_diff: tuple[PartDiff, ...]
    config_changes: tuple[str, ...]
    stopped: str | None
    answer_expected: str
    answer_got: str | None
    reports: tuple[ReplayReport, ...]

    @classmethod
    def of(cls, replayed: ConversationReplay) -> ReplayResult:
        last = replayed.last
        step, parts = last.request if last.request is not None else (None, ())
        return cls(
            run_id=replayed.run_id, identical=replayed.identical, turns=len(replayed.turns),
            turn=last.turn, run_turn=replayed.turn,
            decisions=sum(r.compared for r in replayed.turns),
            divergence=last.divergence, request_step=step, request_diff=parts,
            config_changes=last.config_changes, stopped=last.stopped,
            answer_expected=last.answer_expected, answer_got=last.answer_got,
            reports=replayed.turns)

    def __str__(self) -> str:
        return "\n".join(render_conversation(
            ConversationReplay(run_id=self.run_id, turn=self.run_turn, turns=self.reports)))


def replay(store: StoreLike, run: str, agent: Any) -> ReplayResult:
    """Re-run a recorded run offline with ``agent`` and compare every decision.

    The recording is the cassette: model responses (and a turn cascade's
    decider pick) are served by request hash, tool results by name and
    arguments; a tool result the recorder redacted is re-computed when the
    tool is declared ``deterministic`` and checked against the recorded hash.
    A follow-up turn is replayed with every earlier turn of its conversation.
    ``run`` is a run id, a unique prefix, or ``"last"``.

    >>> result = lens.replay("tests/recordings/desk", "last", make_agent)
    >>> assert result.identical, str(result)
    """
    with opened(store) as source:
        return ReplayResult.of(replay_conversation(source, run, agent_of(agent)))


def diff(store: StoreLike, a: str, b: str) -> RunDiff:
    """Compare runs ``a`` and ``b`` on their decisions (timestamps, ids, durations ignored).

    ``str(result)`` lists what changed per iteration, the first divergence first.
    """
    with opened(store) as source:
        return diff_runs(events_of(source, resolve_run(source, a)),
                         events_of(source, resolve_run(source, b)))


def _target(run_or_path: str | os.PathLike[str], store: StoreLike | None) -> tuple[Any, str]:
    if store is None and is_recording(run_or_path):
        return run_or_path, "last"
    if store is None and isinstance(run_or_path, os.PathLike):
        raise ConfigError(f"{str(run_or_path)!r} is not a recording folder; write one with "
                          "`footprint snapshot RUN --agent M:F -o DIR`")
    from recorder import default_store_path

    return (store if store is not None else default_store_path()), str(run_or_path)


def assert_replays(run_or_path: str | os.PathLike[str], agent_factory: Any, *,
                   store: StoreLike | None = None) -> ReplayResult:
    """Fail (``AssertionError``) unless the recorded run replays decision for decision.

    ``run_or_path`` is a recording folder, or a run id in ``store`` (default:
    ``$FOOTPRINT_STORE`` or ``./.footprint``). The failure message is the
    replay report: the first divergent decision and the request diff.
    """
    source, run = _target(run_or_path, store)
    result = replay(source, run, agent_factory)
    if not result.identical:
        raise AssertionError(str(result))
    return result


def assert_decisions(recording: str | os.PathLike[str], agent_factory: Any, *,
                     update: bool = False) -> str:
    """Fail unless the agent still makes the decisions the folder's ``decisions.json`` holds.

    The recorded messages run on the agent (served from the recording while
    its requests match, then by the agent's own models); the decisions per
    turn and iteration (routing, cursor moves, injections per slot, tool
    calls, answer) are compared with the snapshot as a unified diff.
    ``update=True`` (``pytest --footprint-update``) rewrites the snapshot (a symbolic link
    at its path is a ``ConfigError``: nothing is written through one).
    """
    folder = Path(recording)
    rec = Recording.load(folder)
    current = rerun_decisions(conversation_of(rec, rec.run), agent_of(agent_factory))
    path = folder / DECISIONS
    stored = path.read_text(encoding="utf-8") if path.is_file() else None
    if update:
        if stored != current:  # atomically, and never through a link planted at the path
            write_text_safely(path, current)
        return current
    if stored is None:
        raise AssertionError(f"no decision snapshot at {str(path)!r}; write it with "
                             "`pytest --footprint-update`")
    if stored != current:
        lines = difflib.unified_diff(stored.splitlines(), current.splitlines(),
                                     "recorded decisions", "decisions now", lineterm="", n=2)
        raise AssertionError(f"the decisions changed ({path}; accept with "
                             "`pytest --footprint-update`):\n" + "\n".join(lines))
    return current
