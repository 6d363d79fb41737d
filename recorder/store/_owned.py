"""Settings for a process footprint owns: the CLI's own, and the workers it starts."""

from __future__ import annotations

import gc

__all__ = ["GC_THRESHOLDS", "tune_collector"]

GC_THRESHOLDS = (50_000, 20, 100)
"""The collector's thresholds in a footprint-owned process (Python's defaults: 700, 10, 10)."""


def tune_collector() -> None:
    """Collect cycles less often, and never walk the heap that exists now again.

    A command streaming a million events allocates millions of short-lived,
    acyclic objects (freed by reference counting); with the default thresholds
    a 1M-event export spent ~7 s walking the long-lived heap again and again.
    Only for processes footprint owns, never for a host's.
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
