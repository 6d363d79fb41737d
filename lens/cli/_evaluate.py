"""``footprint evaluate --judge MODULE:FUNC [--where …]``: score stored runs with a judge.

``FUNC(run) -> recorder.Score`` (or a list of them, or ``None``) is called
once per matching run that ended (``run`` is a ``recorder.StoredRun``: its
``row`` of ``runs``, ``answer``, ``status`` and ``events()``); every score
is recorded as feedback, ``by`` ``judge:MODULE:FUNC`` (on keyed runs
chained with ``--key-file FILE`` or ``$FOOTPRINT_CHAIN_KEY``; a keyed run
without it is refused before the judge sees it). A rich progress bar runs
on stderr. A judge that raises on a run: that run is skipped, the others are
scored, and the failures are named on stderr (exit 1). Exit 0 done, 2 bad
input (or a judge returning something other than scores).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

from lens.cli._common import key_file_option
from lens.cli._exits import FINDING, OK, say

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
    key_file_option(p, "each score is chained with it")


def run(args: argparse.Namespace) -> int:
    """Judge the runs and record the scores; 0 done, 1 the judge raised on some runs."""
    from footprint._errors import ConfigError
    from lens.cli._common import chain_key_from, open_from
    from lens.cli._progress import progress
    from lens.playback._agent_ref import load_target
    from recorder import RunQuery, count_runs, evaluate

    judge = load_target(args.judge, flag="--judge", example=_EXAMPLE,
                        kind="a function run -> recorder.Score")
    if not callable(judge):
        raise ConfigError(f"--judge {args.judge!r} names a {type(judge).__name__}, not a "
                          "function; name def FUNC(run) -> recorder.Score")
    failed: list[tuple[str, Exception]] = []
    with open_from(args) as store:
        query = RunQuery.from_where(args.where or {}, limit=10**9)
        with progress("judging", count_runs(store, query), "runs") as advance:
            events = evaluate(store, judge, where=args.where, by=f"judge:{args.judge}",
                              progress=lambda done, _total: advance(done),
                              chain_key=chain_key_from(args.key_file),
                              on_error=lambda run_id, exc: failed.append((run_id, exc)))
    _summary(events, args.judge, failed=len(failed))
    if not failed:
        return OK
    run_id, exc = failed[0]
    others = "the others were" if events else "no run was"
    say(f"footprint evaluate: the judge raised on {len(failed)} run"
        f"{'' if len(failed) == 1 else 's'} (not scored; {others}), first on "
        f"{run_id}: {type(exc).__name__}: {exc}; fix {args.judge} and evaluate again")
    return FINDING


def _summary(events: list[Any], judge: str, *, failed: int) -> None:
    """What was recorded: how many scores on how many runs, each name's count and mean
    (``failed``: the runs the judge raised on, named on stderr)."""
    if not events:
        print("no scores recorded" + ("" if failed else " (no matching run that ended, or "
                                                         "the judge returned none)"))
        return
    values: dict[str, list[float]] = defaultdict(list)
    for event in events:
        values[event.name] += [event.value] if event.value is not None else []
    runs = len({e.run_id for e in events})
    print(f"{len(events)} scores recorded on {runs} runs by {judge}")
    for name, numbers in sorted(values.items()):
        mean = f", mean {sum(numbers) / len(numbers):.3g}" if numbers else ""
        print(f"  {name}: {len([e for e in events if e.name == name])} scores{mean}")
