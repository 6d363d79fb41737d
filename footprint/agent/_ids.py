"""Injectable identity: where run and conversation ids come from.

A run id is a UUIDv7: 48 bits of Unix milliseconds, then 74 random bits. By
default (``RandomIds``) the milliseconds are the operating system's clock when
the id is made — whatever clock the agent runs on, so a store's ``last`` run is
the one made most recently even when agents run on a test clock — and the
random bits come from the operating system (``secrets``), so ids stay unique
across agents, processes and machines even when every agent replays the same
clock and seed; within one process they increase, so runs made in one
millisecond still sort in the order they were made. ``SeededIds`` takes the
milliseconds from the agent's clock and the bits from a seeded generator
instead: byte-identical ids on every re-run, for golden files and snapshots —
never for agents that share a store.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
import uuid
from typing import Protocol, runtime_checkable

from footprint._errors import ConfigError

__all__ = ["IdSource", "RandomIds", "SeededIds", "uuid7"]

_RAND_BITS = 74


@runtime_checkable
class IdSource(Protocol):
    def new_id(self, now_ns: int) -> str:
        """A fresh id for something that starts at ``now_ns`` (UTC nanoseconds)."""
        ...


def uuid7(ms: int, rand: int) -> str:
    """The UUIDv7 text for Unix milliseconds ``ms`` and 74 random bits ``rand``."""
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


_LATEST = [0, 0]
"""The milliseconds and random bits of the last ``RandomIds`` id this process made."""
_LATEST_LOCK = threading.Lock()
_STEP_BITS = 32
_BACKWARDS_MS = 10_000


def _monotonic(ms: int) -> tuple[int, int]:
    """``(ms, rand)`` for the next id, after every id this process made (RFC 9562 §6.2,
    monotonic random): in the millisecond of the last id (or when the clock stepped back
    by less than ``_BACKWARDS_MS``) the random bits grow by a random step, so the ids of
    runs made one after the other sort in that order — a turn and its follow-up made in
    one millisecond are still told apart by ``last``."""
    with _LATEST_LOCK:
        last_ms, last_rand = _LATEST
        if last_ms - _BACKWARDS_MS < ms <= last_ms:
            ms, rand = last_ms, last_rand + 1 + secrets.randbits(_STEP_BITS)
            if rand >> _RAND_BITS:
                ms, rand = ms + 1, secrets.randbits(_RAND_BITS - 1)
        else:
            rand = secrets.randbits(_RAND_BITS)
        _LATEST[:] = [ms, rand]
    return ms, rand


class RandomIds:
    """UUIDv7 ids stamped with the operating system's clock, their random bits from the
    operating system (the default), increasing within one process (:func:`_monotonic`).
    The agent's ``now_ns`` is not used: a test clock would date the id, and so the
    store's ``last``, into the past."""

    __slots__ = ()

    def new_id(self, now_ns: int) -> str:
        return uuid7(*_monotonic(time.time_ns() // 1_000_000))

    def __repr__(self) -> str:
        return "RandomIds()"


class SeededIds:
    """UUIDv7 ids from ``random.Random(seed)``: the same ids on every re-run.

    For tests, golden files and snapshots only: two agents seeded alike and
    started in the same millisecond get the same id, so never point them at
    one store.
    """

    __slots__ = ("_rng", "seed")

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(f"SeededIds(seed) needs an int; got {seed!r}")
        self.seed = seed
        self._rng = random.Random(seed)

    def new_id(self, now_ns: int) -> str:
        return uuid7(now_ns // 1_000_000, self._rng.getrandbits(_RAND_BITS))

    def __repr__(self) -> str:
        return f"SeededIds({self.seed})"
