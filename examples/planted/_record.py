"""The part every planted example shares when run as a script: record its conversation.

Each example's ``main`` calls :func:`record` with its own ``make_agent`` and
``converse``; the agent gets a real clock (so ``why last`` finds the newest
recording) and a fresh seed for each recording.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from footprint import RunResult, SystemClock

__all__ = ["record"]


def record(make_agent: Callable[..., Any], converse: Callable[[Any], RunResult], script: str,
           argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store), print
    the answer and the command that explains it."""
    from recorder import ParquetSink, Recorder, default_store_path

    parser = argparse.ArgumentParser(
        prog=Path(script).name, description="Record this planted example's conversation "
        "offline, then print its answer and the command that explains it.")
    parser.add_argument("store", nargs="?", default=None,
                        help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    recorder = Recorder(sinks=[ParquetSink(args.store or default_store_path())])
    try:
        agent = make_agent(sink=recorder, clock=SystemClock(), seed=secrets.randbits(32))
        result = converse(agent)
    finally:
        recorder.close()
    print(result.answer)
    print(f"explain: footprint why last --agent examples/planted/{Path(script).name}:make_agent")
    return 0
