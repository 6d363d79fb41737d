"""``footprint why RUN``: the answer's custody chain, suspects ranked, and — with
``--agent`` — counterfactual re-runs that may call a suspect a cause.

Exit 0 with a report, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from footprint._errors import FootprintError
from lens._cmd_common import count_arg

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``why`` on the CLI's subparsers."""
    p = sub.add_parser("why", help="why did a run answer that: custody chain, suspects, and "
                                   "counterfactual re-runs with --agent")
    p.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    p.add_argument("--agent", metavar="MODULE:FACTORY", default=None,
                   help="rebuild this agent to re-run without each suspect (causal verdicts); "
                        "without it the report is correlational only")
    p.add_argument("--seeds", type=count_arg(0, 10_000), default=3, metavar="N",
                   help="seeded re-runs per suspect and for the baseline (at least 2; default 3)")
    p.add_argument("--top", type=count_arg(0, 10_000), default=3, metavar="K",
                   help="re-run without each of the K best-ranked removable suspects (default 3)")
    p.add_argument("--step", default=None, metavar="llm#k",
                   help="explain this model call instead of the last one")
    p.add_argument("--exact", action="store_true",
                   help="compare whole answers, not their first word (label)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def _progress(done: int, total: int, what: str) -> None:
    print(f"why: re-run {done}/{total} · {what}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Print the why report; 0 on success, 2 on bad input."""
    from footprint.events import NullSink
    from lens._agent_ref import build_agent, load_target
    from lens._cmd_common import open_from
    from lens._why import render_why, why, why_json

    try:
        store = open_from(args)
        events = store.events(store.resolve_run(args.run))
        agent = build_agent(load_target(args.agent), NullSink()) if args.agent else None
        report = why(events, agent=agent, step=args.step, seeds=args.seeds, top=args.top,
                     exact=args.exact, progress=_progress if agent is not None else None)
    except FootprintError as exc:
        print(f"footprint why: {exc}", file=sys.stderr)
        return 2
    print(why_json(report) if args.json else "\n".join(render_why(report)))
    return 0
