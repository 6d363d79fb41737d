"""lens — replay, diff, why, the TUI and the command line.

The Python API works on a recording: a store (``open_store(path)``), a path
to a store or to a recording folder written by ``footprint snapshot``, or a
list of events.

- ``replay(store, run, agent) -> ReplayResult``: re-run a recorded run (every
  turn of its conversation) offline and compare each decision;
- ``diff(store, a, b) -> RunDiff``: two runs compared on their decisions;
- ``assert_replays`` / ``assert_decisions``: the same as test assertions
  (the pytest plugin's ``footprint_replay`` fixture wraps them);
- ``why(store, run, agent=...) -> WhyReport``: why the run answered what it
  did — every candidate on the answer's causal past and, with the agent that
  made it, counterfactual re-runs that confirm a cause at a stated confidence;
  ``why(store, run, resend=provider)`` re-sends the explained call's recorded
  request without pieces instead (request-level claims, no agent needed).

The names load on first use, so ``footprint --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lens._api import ReplayResult, assert_decisions, assert_replays, diff, replay
    from lens.explain._report import WhyReport
    from lens.explain._resend_why import why
    from lens.playback._diff import RunDiff
    from recorder import open_store

__all__ = [
    "ReplayResult",
    "RunDiff",
    "WhyReport",
    "assert_decisions",
    "assert_replays",
    "diff",
    "open_store",
    "replay",
    "why",
]

_HOMES = {"RunDiff": "lens.playback._diff", "open_store": "recorder",
          "why": "lens.explain._resend_why", "WhyReport": "lens.explain._report"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'lens' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES.get(name, "lens._api")), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
