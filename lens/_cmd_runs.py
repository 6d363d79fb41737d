"""``footprint runs``: one line per recorded run."""

from __future__ import annotations

import argparse

from lens._cmd_common import open_from, table

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    store = open_from(args)
    rows = store.rows(
        "SELECT run_id, strftime(started, '%Y-%m-%d %H:%M:%S'), status, iterations, tokens, "
        "model, events, dropped, answer FROM runs ORDER BY start_ns DESC LIMIT ?",
        [max(args.limit, 0)],
    )
    if not rows:
        print(f"no runs in {store.root}")
        return 0
    columns = ("run", "started", "status", "iter", "tokens", "model", "events", "dropped", "answer")
    print(table(columns, list(reversed(rows)), width=48))
    return 0
