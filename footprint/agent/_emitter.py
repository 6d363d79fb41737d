"""The one place a run's events are stamped and sent.

Every event of a run passes through ``RunEmitter``: it assigns the gap-free
``seq``, the timestamp from the injected clock, and the envelope (run id,
turn, iteration, step id). A sink that raises is counted and never allowed
to break the run.

A sink that declares ``keeps_events = False`` (``NullSink``) is never sent an
event, so none is built: the emitter still hands out each seq and reads the
clock once per event, so seq numbers, clock readings and everything the run
returns are the same as with a sink that keeps them. ``emit_with`` and
``skip`` let a caller leave out the work of building a payload nobody keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from footprint.agent._clock import Clock
from footprint.events import EventBase, EventSink, keeps_events

__all__ = ["RunEmitter"]


class RunEmitter:
    """Stamps and sends the events of one run."""

    __slots__ = ("_clock", "_seq", "_sink", "iteration", "keeps", "run_id", "sink_errors",
                 "turn")

    def __init__(self, sink: EventSink, clock: Clock, run_id: str, turn: int) -> None:
        self._sink = sink
        self._clock = clock
        self._seq = 0
        self.run_id = run_id
        self.turn = turn
        self.iteration = 0
        self.sink_errors = 0
        self.keeps = keeps_events(sink)
        """Whether the sink keeps events: when not, no event (nor payload) is built."""

    @property
    def clock(self) -> Clock:
        """The clock this run reads (never the global one)."""
        return self._clock

    def emit(
        self,
        cls: type[EventBase],
        step_id: str,
        *,
        ts: int | None = None,
        parent_step: str | None = None,
        **payload: Any,
    ) -> int:
        """Build one event of ``cls`` with the envelope filled in, send it; its seq."""
        seq = self._seq
        self._seq = seq + 1
        stamp = self._clock.now_ns() if ts is None else ts
        if not self.keeps:
            return seq
        event = cls(
            run_id=self.run_id, seq=seq, ts=stamp, turn=self.turn, iteration=self.iteration,
            step_id=step_id, parent_step=parent_step, **payload,
        )
        try:
            self._sink.emit(event)
        except Exception:  # a sink must never break a run; count and carry on
            self.sink_errors += 1
        return seq

    def emit_with(
        self,
        cls: type[EventBase],
        step_id: str,
        payload: Callable[[], Mapping[str, Any]],
        *,
        parent_step: str | None = None,
    ) -> int:
        """As ``emit``, the payload from ``payload()``, called only when the sink keeps it."""
        if not self.keeps:
            return self.skip()
        return self.emit(cls, step_id, parent_step=parent_step, **payload())

    def skip(self, count: int = 1) -> int:
        """Account for ``count`` events the sink does not keep, as ``emit`` would
        (a seq and a clock reading each); the first one's seq."""
        first = self._seq
        self._seq = first + count
        now_ns = self._clock.now_ns
        for _ in range(count):
            now_ns()
        return first
