"""``footprint diff A B``: what two runs decided differently, aligned on decisions.

Exit 0 when the decision streams are equal, 1 when they differ, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from footprint._errors import FootprintError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``diff`` on the CLI's subparsers."""
    p = sub.add_parser("diff", help="compare two runs decision by decision (exit 0 = equal)")
    p.add_argument("a", metavar="A", help="a run id, a unique prefix, or 'last'")
    p.add_argument("b", metavar="B", help="a run id, a unique prefix, or 'last'")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    """Print the diff; 0 equal, 1 different, 2 bad input."""
    from lens.cli._common import open_from
    from lens.playback._diff import diff_runs, render_diff

    try:
        store = open_from(args)
        a, b = store.resolve_run(args.a), store.resolve_run(args.b)
        result = diff_runs(store.events(a), store.events(b))
    except FootprintError as exc:
        print(f"footprint diff: {exc}", file=sys.stderr)
        return 2
    print("\n".join(render_diff(result)))
    return 0 if result.equal else 1
