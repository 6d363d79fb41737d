"""``footprint snapshot RUN --agent MODULE:FACTORY -o DIR``: a recorded run as a regression test.

Writes ``DIR/<name>/`` (the run and the earlier turns of its conversation:
events, blobs, the decision snapshot; redacted values stay redacted) and
``DIR/test_<name>.py``, which replays it with the pytest plugin. Exit 0 on
success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from footprint._errors import FootprintError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``snapshot`` on the CLI's subparsers."""
    p = sub.add_parser(
        "snapshot", help="export a recorded run (with its conversation) and a pytest module "
                         "that replays it")
    p.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    p.add_argument("--agent", metavar="MODULE:FACTORY", default=None,
                   help="the agent the test replays with, e.g. "
                        "lens._examples.support_desk:make_agent (leave it out for a run "
                        "mapped from another framework's trace: the folder only is written)")
    p.add_argument("-o", "--out", metavar="DIR", required=True,
                   help="the test folder to write into, e.g. tests/recordings/")
    p.add_argument("--name", default=None,
                   help="the recording's name (default: the agent's name and the run id's tail)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    """Export the run; 0 written, 2 bad input."""
    from lens.cli._common import open_from
    from lens.playback._agent_ref import load_target
    from lens.playback._snapshot import export_run

    try:
        if args.agent is not None:
            load_target(args.agent)  # a bad reference fails now, not in the written test
        with open_from(args) as store:
            folder, module = export_run(store, args.run, args.out, agent=args.agent,
                                        name=args.name)
    except FootprintError as exc:
        print(f"footprint snapshot: {exc}", file=sys.stderr)
        return 2
    size = sum(f.stat().st_size for f in folder.iterdir())
    if module is None:
        print(f"wrote {folder} ({size / 1024:.1f} KiB); no test module without --agent "
              "(the folder is a recording the lens API reads: store=FOLDER)")
        return 0
    print(f"wrote {folder} ({size / 1024:.1f} KiB) and {module}")
    print(f"run it with: pytest {module}")
    return 0
