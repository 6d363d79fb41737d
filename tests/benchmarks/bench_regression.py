"""Regression-test figures: what a recorded conversation costs as a test.

``regression_replay_ms``: median milliseconds for ``lens.replay`` of the
two-turn support-desk recording in ``examples/regression/support_desk``
(read from its JSON folder, both turns replayed, every decision compared).
``regression_decisions_ms``: the same for the decision-snapshot assertion.
``regression_recording_kib``: the recording folder's size on disk.
No target is set; the figures show a recorded conversation is a cheap test.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import lens

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "regression" / "support_desk"
DESK = "lens._examples.support_desk:make_agent"


def _median_ms(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        work()
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 3)


def figures(quick: bool) -> dict[str, float]:
    repeats = 3 if quick else 15
    result = lens.replay(FOLDER, "last", DESK)
    assert result.identical and result.turns == 2, "the example recording must replay"
    size = sum(f.stat().st_size for f in FOLDER.iterdir()) / 1024
    return {
        "regression_replay_ms": _median_ms(lambda: lens.replay(FOLDER, "last", DESK), repeats),
        "regression_decisions_ms": _median_ms(
            lambda: lens.assert_decisions(FOLDER, DESK), repeats),
        "regression_recording_kib": round(size, 1),
    }
