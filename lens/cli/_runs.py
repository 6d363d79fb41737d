"""``footprint runs``: one line per recorded run, filtered, newest last."""

from __future__ import annotations

import argparse

from lens.cli._common import open_from, table, usd

__all__ = ["run"]

_COLUMNS = ("run_id", "started", "status", "iterations", "tokens", "model", "events",
            "dropped", "answer", "error_type", "error_message", "failed_step", "cost_usd",
            "unpriced_calls")
_HEADS = ("run", "started", "status", "iter", "tokens", "cost", "model", "events", "dropped",
          "answer", "error")


def _error(row: dict[str, object]) -> str:
    """A failed run's error cell: where it failed, its type and message (``show`` has it whole)."""
    if row["error_type"] is None:
        return ""
    return f"{row['failed_step'] or '?'} {row['error_type']}: {row['error_message']}"


def run(args: argparse.Namespace) -> int:
    from recorder import RunQuery, count_runs, list_runs

    store = open_from(args)
    query = RunQuery(status=tuple(args.status or ()), model=args.model, since=args.since,
                     until=args.until, answer=args.search, limit=min(max(args.limit, 0), 10**9))
    found = list_runs(store, query).select(list(_COLUMNS)).to_pylist()
    if not found:
        filtered = any((args.status, args.model, args.since, args.until, args.search))
        print(f"no runs {'match those filters ' if filtered else ''}in {store.root}")
        return 0
    rows = [[r["run_id"], r["started"].strftime("%Y-%m-%d %H:%M:%S"),
             *(r[c] for c in _COLUMNS[2:5]), usd(r["cost_usd"], r["unpriced_calls"]),
             *(r[c] for c in _COLUMNS[5:9]), _error(r)] for r in reversed(found)]
    print(table(_HEADS, rows, width=48))
    total = count_runs(store, query) if len(found) == query.limit else len(found)
    if total > len(found):
        print(f"({len(found)} newest of {total} matching runs; --limit N shows more)")
    return 0
