"""Injectable time and identity, so a run can be replayed exactly.

The host never reads a global clock or RNG: it asks the ``Clock`` it was
given and draws ids from the seeded ``random.Random`` it was given.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Protocol, runtime_checkable

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


def new_run_id(clock: Clock, rng: random.Random) -> str:
    """A time-sortable UUIDv7 from the given clock and random source."""
    ms = clock.now_ns() // 1_000_000
    rand = rng.getrandbits(74)
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))
