"""The production loop, offline: label runs, collect feedback, find the bad ones.

Run it: ``python examples/feedback_loop.py [STORE]`` (without STORE, a temporary
folder deleted at the end). It records 200 runs of the support desk (releases
1.3 and 1.4, one user per run, a ``beta`` tag on every tenth), dated as real
traffic would be: one run every :data:`SPACING_NS` up to now (the last 6.25
days, so ``footprint runs --since 7d`` finds them all), attaches users'
thumbs-down (``helpful`` = 0) to :data:`THUMBS_DOWN` runs and thumbs-up to a
few others, and prints the run
ids that got a thumbs-down on release 1.4: the ones
``footprint runs --score 'helpful<1' --release 1.4`` lists. :func:`helpful`
is a judge for ``footprint evaluate --judge examples.feedback_loop:helpful``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from footprint import StepClock
from lens._examples.support_desk import DEFAULT_MESSAGE, make_agent
from recorder import ParquetSink, Recorder, Score, StoredRun, feedback

RUNS = 200
THUMBS_DOWN = (7, 42, 123, 155)
"""Indexes of the runs users flagged (odd indexes are release 1.4; 42 is a 1.3 run)."""
THUMBS_UP = (9, 11, 40)
"""Indexes of runs users liked (40 is release 1.3)."""
SPACING_NS = 45 * 60 * 1_000_000_000
"""Time between two recorded runs (45 minutes)."""


def release_of(i: int) -> str:
    return "1.4" if i % 2 else "1.3"


def record(store: str | Path, runs: int = RUNS) -> list[str]:
    """Record ``runs`` labelled runs of the support desk; their run ids in order."""
    recorder = Recorder(sinks=[ParquetSink(store)])
    ids = []
    try:
        desks = {r: make_agent(sink=recorder).variant(release=r, environment="prod")
                 for r in ("1.3", "1.4")}
        first_ns = time.time_ns() - runs * SPACING_NS
        for i in range(runs):  # each run on its own clock, SPACING_NS after the one before
            desk = desks[release_of(i)].variant(clock=StepClock(first_ns + i * SPACING_NS))
            result = desk.run_sync(
                DEFAULT_MESSAGE, user=f"user-{i % 17}", session=f"s-{i // 4}",
                tags=("beta",) if i % 10 == 0 else ())
            ids.append(result.run_id)
    finally:
        recorder.close()
    return ids


def collect_feedback(store: str | Path, ids: list[str]) -> list[str]:
    """Users' thumbs; the ids of the thumbs-down runs of release 1.4."""
    for i in THUMBS_UP:
        feedback(store, ids[i], "helpful", value=1, by=f"user-{i % 17}")
    flagged = []
    for i in THUMBS_DOWN:
        feedback(store, ids[i], "helpful", value=0, comment="it promised a refund it can't give",
                 by=f"user-{i % 17}")
        if release_of(i) == "1.4":
            flagged.append(ids[i])
    return flagged


def helpful(run: StoredRun) -> Score | None:
    """A judge: an answer that mentions the refund is helpful (1), one that does not is 0."""
    if run.answer is None:
        return None
    mentions = "refund" in run.answer.lower()
    return Score(name="mentions_refund", value=1.0 if mentions else 0.0,
                 comment=None if mentions else "the answer never says what happens to the $40")


def main(argv: list[str]) -> int:
    summary = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="feedback_loop.py", description=summary)
    parser.add_argument("store", nargs="?", help="store directory (default: a temporary one)")
    args = parser.parse_args(argv[1:])
    if args.store:
        return _loop(args.store)
    with tempfile.TemporaryDirectory(prefix="footprint-loop-") as store:
        return _loop(store)


def _loop(store: str) -> int:
    ids = record(store)
    flagged = collect_feedback(store, ids)
    print(f"{len(ids)} runs recorded in {store}; thumbs-down on release 1.4 (what "
          f"`footprint runs --score 'helpful<1' --release 1.4` lists):")
    for run_id in flagged:
        print(run_id)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
