"""Injectable identity: where run and conversation ids come from.

A run id is a UUIDv7: 48 bits of Unix milliseconds, then 74 random bits. By
default (``RandomIds``) the milliseconds are the operating system's clock when
the id is made — whatever clock the agent runs on, so a store's ``last`` run is
the one made most recently even when agents run on a test clock — and the
random bits come from the operating system (``secrets``), so ids stay unique
across agents, processes and machines even when every agent replays the same
clock and seed. ``SeededIds`` takes the milliseconds from the agent's clock and
the bits from a seeded generator instead: byte-identical ids on every re-run,
for golden files and snapshots — never for agents that share a store.
"""

from __future__ import annotations

import random
import secrets
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


class RandomIds:
    """UUIDv7 ids stamped with the operating system's clock, their random bits from the
    operating system (the default). The agent's ``now_ns`` is not used: a test clock
    would date the id, and so the store's ``last``, into the past."""

    __slots__ = ()

    def new_id(self, now_ns: int) -> str:
        return uuid7(time.time_ns() // 1_000_000, secrets.randbits(_RAND_BITS))

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
