"""Lens figures: what replay, diff and why cost on the showcase support-desk run.

``lens_replay_ms``: median milliseconds to replay the recorded run (160 events,
six model calls, four tools) offline against its own recording, comparing
every decision. ``lens_diff_ms``: median milliseconds to diff it against the
run without the planted fact. ``lens_why_causal_ms``: median milliseconds for
``why`` with a runner (live baseline, delta-debugging search, exact tests).
No target is set; the figures show the cost stays interactive.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from footprint.events import ListSink
from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.explain._why import why
from lens.playback._diff import diff_runs
from lens.playback._replay import replay


def _median_ms(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        work()
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 3)


def figures(quick: bool) -> dict[str, float]:
    repeats = 3 if quick else 15
    recorded, changed = ListSink(), ListSink()
    make_agent(sink=recorded).answer()
    make_agent(sink=changed, without=(PLANTED_FACT,)).answer()
    a, b = recorded.events, changed.events
    report = replay(a, make_agent())
    assert report.identical, "the benchmark's replay must be identical"
    return {
        "lens_replay_ms": _median_ms(lambda: replay(a, make_agent()), repeats),
        "lens_diff_ms": _median_ms(lambda: diff_runs(a, b), repeats),  # type: ignore[arg-type]
        "lens_why_causal_ms": _median_ms(
            lambda: why(a, "last", agent=make_agent()), repeats),
    }
