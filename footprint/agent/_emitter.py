"""The one place a run's events are stamped and sent.

Every event of a run passes through ``RunEmitter.emit``: it assigns the
gap-free ``seq``, the timestamp from the injected clock, and the envelope
(run id, turn, iteration, step id). A sink that raises is counted and never
allowed to break the run.
"""

from __future__ import annotations

from typing import Any, TypeVar

from footprint.agent._clock import Clock
from footprint.events import EventBase, EventSink

__all__ = ["RunEmitter"]

E = TypeVar("E", bound=EventBase)


class RunEmitter:
    """Stamps and sends the events of one run."""

    __slots__ = ("_clock", "_seq", "_sink", "iteration", "run_id", "sink_errors", "turn")

    def __init__(self, sink: EventSink, clock: Clock, run_id: str, turn: int) -> None:
        self._sink = sink
        self._clock = clock
        self._seq = 0
        self.run_id = run_id
        self.turn = turn
        self.iteration = 0
        self.sink_errors = 0

    @property
    def clock(self) -> Clock:
        """The clock this run reads (never the global one)."""
        return self._clock

    def emit(
        self,
        cls: type[E],
        step_id: str,
        *,
        ts: int | None = None,
        parent_step: str | None = None,
        **payload: Any,
    ) -> E:
        """Build one event of ``cls`` with the envelope filled in, send it, return it."""
        event = cls(
            run_id=self.run_id,
            seq=self._seq,
            ts=self._clock.now_ns() if ts is None else ts,
            turn=self.turn,
            iteration=self.iteration,
            step_id=step_id,
            parent_step=parent_step,
            **payload,
        )
        self._seq += 1
        try:
            self._sink.emit(event)
        except Exception:  # a sink must never break a run; count and carry on
            self.sink_errors += 1
        return event
