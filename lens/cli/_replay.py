"""``footprint replay RUN --agent MODULE:FACTORY``: re-run a recorded run offline.

A follow-up turn is replayed with every earlier turn of its conversation.
Exit 0 when the replay made every recorded decision again, 1 when it
diverged (the report names the first divergent decision), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from footprint._errors import FootprintError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``replay`` on the CLI's subparsers."""
    p = sub.add_parser(
        "replay", help="re-run a recorded run offline against its recording (exit 0 = identical)")
    p.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    p.add_argument("--agent", metavar="MODULE:FACTORY", required=True,
                   help="the agent to re-run: a module path or file plus ':' and an Agent or "
                        "factory, e.g. lens._examples.support_desk:make_agent")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory, or a recording folder written by `footprint "
                        "snapshot` (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    """Replay and print the report; 0 identical, 1 diverged, 2 bad input."""
    from footprint.events import NullSink
    from lens.cli._common import open_from
    from lens.playback._agent_ref import build_agent, load_target
    from lens.playback._conversation import render_conversation, replay_conversation
    from lens.playback._snapshot import Recording, is_recording

    try:
        store: Any = Recording.load(args.store) if args.store and is_recording(args.store) \
            else open_from(args)
        agent = build_agent(load_target(args.agent), NullSink())
        result = replay_conversation(store, args.run, agent)
    except FootprintError as exc:
        print(f"footprint replay: {exc}", file=sys.stderr)
        return 2
    print("\n".join(render_conversation(result)))
    return 0 if result.identical else 1
