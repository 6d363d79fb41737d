"""Injectable time and identity, so a run can be replayed exactly.

The host never reads a global clock: it asks the ``Clock`` it was given, and
draws ids from the ``IdSource`` it was given (see ``_ids``).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

from footprint.agent._ids import IdSource, RandomIds

__all__ = ["Clock", "StepClock", "SystemClock", "new_run_id"]


@runtime_checkable
class Clock(Protocol):
    def now_ns(self) -> int:
        """Wall-clock time, UTC nanoseconds (event timestamps)."""
        ...

    def monotonic_ns(self) -> int:
        """A monotonic reading in nanoseconds (durations)."""
        ...


class SystemClock:
    """The real clocks of this machine."""

    __slots__ = ()

    def now_ns(self) -> int:
        return time.time_ns()

    def monotonic_ns(self) -> int:
        return time.perf_counter_ns()


class StepClock:
    """A deterministic clock: every reading advances by ``step_ns``."""

    __slots__ = ("_now", "_step")

    def __init__(self, start_ns: int = 1_767_225_600_000_000_000, step_ns: int = 1_000_000) -> None:
        self._now = start_ns
        self._step = step_ns

    def now_ns(self) -> int:
        self._now += self._step
        return self._now

    def monotonic_ns(self) -> int:
        return self.now_ns()


def new_run_id(clock: Clock, ids: IdSource | None = None) -> str:
    """A time-sortable UUIDv7 at the clock's time; random bits from ``ids``
    (default: the operating system's randomness)."""
    return (ids if ids is not None else RandomIds()).new_id(clock.now_ns())
