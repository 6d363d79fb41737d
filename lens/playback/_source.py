"""Where a lens function reads a recording from, and the agent it re-runs.

``store`` is a ``Store`` from ``open_store``, a path to a store directory or to
a recording folder (``footprint snapshot``), or a sequence of events (a
``ListSink``'s); ``agent`` is an ``Agent``, a factory returning one, or a
``"MODULE:FACTORY"`` string.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

from footprint._errors import ConfigError
from footprint.events import NullSink
from lens.playback._agent_ref import build_agent, load_target
from lens.playback._snapshot import Recording, is_recording

__all__ = ["StoreLike", "agent_of", "opened"]

StoreLike = Any
"""A ``Store``, a path to a store or a recording folder, or a sequence of events."""


@contextlib.contextmanager
def opened(store: StoreLike) -> Iterator[Any]:
    """``store`` as something the conversation reader takes; a store opened here is closed."""
    if isinstance(store, str | os.PathLike):
        if is_recording(store):
            yield Recording.load(store)
            return
        from recorder import open_store

        with open_store(store) as opened_store:
            yield opened_store
        return
    if isinstance(store, Sequence) or hasattr(store, "events"):
        yield store
        return
    raise ConfigError(f"store={store!r} is not a store; pass lens.open_store(path), a store or "
                      "recording folder path, or a list of events")


def agent_of(agent: Any) -> Any:
    """An ``Agent`` from an Agent, a factory, or a ``MODULE:FACTORY`` string."""
    target = load_target(agent) if isinstance(agent, str) else agent
    return build_agent(target, NullSink())
