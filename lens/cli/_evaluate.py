"""``footprint evaluate --judge MODULE:FUNC [--where …]``: score stored runs with a judge.

``FUNC(run) -> recorder.Score`` (or a list of them, or ``None``) is called
once per matching run that ended (``run`` is a ``recorder.StoredRun``: its
``row`` of ``runs``, ``answer``, ``status`` and ``events()``),
``--concurrency`` runs at a time; every score is recorded as feedback, ``by``
``judge:MODULE:FUNC``, in batches as they come (``recorder._evaluate``; on
keyed runs chained with ``--key-file FILE`` or ``$FOOTPRINT_CHAIN_KEY``; a
keyed run without it is refused before the judge sees it). A run already
scored by this judge is skipped unless ``--force``. A rich progress bar runs
on stderr. A judge that raises on a run: that run is skipped, the others are
scored, and the failures are named on stderr (exit 1). Ctrl-C: the judges
running finish and every finished score is kept (exit 130; run the command
again for the rest); a second Ctrl-C stops at once, keeping the finished
ones. Exit 0 done, 2 bad input (or a judge returning something other than
scores).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lens.cli._common import count_arg, key_file_option
from lens.cli._exits import FINDING, INTERRUPTED, OK, say

__all__ = ["add_parser", "run"]

_EXAMPLE = "examples/feedback_loop.py:helpful"


def add_parser(sub: Any) -> None:
    """Register ``evaluate`` on the CLI's subparsers."""
    p = sub.add_parser("evaluate", help="run a judge function over stored runs and record "
                                        "its scores")
    p.add_argument("--judge", metavar="MODULE:FUNC", required=True,
                   help=f"def FUNC(run) -> recorder.Score, e.g. {_EXAMPLE}")
    p.add_argument("--where", metavar="FILTERS", default=None,
                   help="only these runs, e.g. 'release=1.4 tag=beta since=2h' (keys: user, "
                        "session, tag, release, env, status, since, until, score, model, "
                        "answer)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")
    p.add_argument("--concurrency", type=count_arg(1, 256), default=8, metavar="N",
                   help="runs judged at a time, on threads (default 8)")
    p.add_argument("--force", action="store_true",
                   help="judge again the runs this judge already scored (default: skip them)")
    key_file_option(p, "each score is chained with it")


def run(args: argparse.Namespace) -> int:
    """Judge the runs and record the scores; 0 done, 1 the judge raised on some runs, 130
    interrupted (the finished scores kept)."""
    from footprint._errors import ConfigError
    from lens.playback._agent_ref import load_target

    judge = load_target(args.judge, flag="--judge", example=_EXAMPLE,
                        kind="a function run -> recorder.Score")
    if not callable(judge):
        raise ConfigError(f"--judge {args.judge!r} names a {type(judge).__name__}, not a "
                          "function; name def FUNC(run) -> recorder.Score")
    failed: list[tuple[str, Exception]] = []
    skipped: list[str] = []
    try:
        events = _judge_all(args, judge, failed, skipped)
    except KeyboardInterrupt as stopped:
        return _interrupted(stopped, args.judge)
    _summary(events, args.judge, failed=len(failed), skipped=len(skipped))
    if not failed:
        return OK
    run_id, exc = failed[0]
    others = "the others were" if events else "no run was"
    say(f"footprint evaluate: the judge raised on {len(failed)} run"
        f"{'' if len(failed) == 1 else 's'} (not scored; {others}), first on "
        f"{run_id}: {type(exc).__name__}: {exc}; fix {args.judge} and evaluate again")
    return FINDING


def _judge_all(args: argparse.Namespace, judge: Any, failed: list[tuple[str, Exception]],
               skipped: list[str]) -> list[Any]:
    from lens.cli._common import chain_key_from, open_from
    from lens.cli._exits import own_interrupts
    from recorder import evaluate

    with open_from(args) as store, _bar() as advance, own_interrupts():
        return evaluate(store, judge, where=args.where, by=f"judge:{args.judge}",
                        progress=advance, chain_key=chain_key_from(args.key_file),
                        on_error=lambda run_id, exc: failed.append((run_id, exc)),
                        concurrency=args.concurrency, force=args.force,
                        skipped=skipped.extend,
                        notice=lambda line: say(f"footprint evaluate: {line}"))


@contextmanager
def _bar() -> Iterator[Callable[[int, int], None]]:
    """Yield ``advance(done, total)``: a rich bar of the runs judged, with the runs a
    second; on stderr, only on a terminal, cleared at the end."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    with Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                  TextColumn("{task.fields[speed]} runs/s"), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task("judging", total=None, speed="…")
        job = bar.tasks[-1]

        def advance(done: int, total: int) -> None:
            per_s = job.speed
            bar.update(task, total=total, completed=done,
                       speed="…" if per_s is None else f"{per_s:.3g}")

        yield advance


def _interrupted(stopped: KeyboardInterrupt, judge: str) -> int:
    """Ctrl-C: what was kept; a second one left judges running, so end the process now
    rather than wait for them at exit."""
    from recorder import EvaluateInterrupted

    if not isinstance(stopped, EvaluateInterrupted):
        raise stopped
    if stopped.recorded:
        _summary(stopped.recorded, judge, failed=0, skipped=0)
    else:
        print("no scores recorded")
    say("footprint evaluate: interrupted; the scores above are kept, run the same command "
        "again to judge the rest (runs already scored are skipped)")
    if stopped.abandoned:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)
    return INTERRUPTED


def _summary(events: list[Any], judge: str, *, failed: int, skipped: int) -> None:
    """What was recorded: how many scores on how many runs, each name's count and mean
    (``failed``: the runs the judge raised on, named on stderr; ``skipped``: the runs
    it had scored before)."""
    if skipped:
        print(f"{skipped} run{'' if skipped == 1 else 's'} already scored by {judge} "
              "skipped (--force judges them again)")
    if not events:
        print("no scores recorded" + ("" if failed or skipped else
                                      " (no matching run that ended, or the judge returned "
                                      "none)"))
        return
    values: dict[str, list[float]] = defaultdict(list)
    for event in events:
        values[event.name] += [event.value] if event.value is not None else []
    runs = len({e.run_id for e in events})
    print(f"{len(events)} scores recorded on {runs} runs by {judge}")
    for name, numbers in sorted(values.items()):
        mean = f", mean {sum(numbers) / len(numbers):.3g}" if numbers else ""
        print(f"  {name}: {len([e for e in events if e.name == name])} scores{mean}")
