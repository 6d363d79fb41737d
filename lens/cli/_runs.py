"""``footprint runs``: one line per recorded run, filtered, newest last."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from typing import Any

from lens.cli._common import jsonable, open_from, table

__all__ = ["add_filters", "run"]

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



_FINAL = """
SELECT run_id, arg_max(stop_reason, end_seq), arg_max(coalesce(content, ''), end_seq),
       arg_max(coalesce(tool_call_count, 0), end_seq)
FROM llm_calls WHERE end_seq IS NOT NULL AND run_id IN (SELECT unnest(?::VARCHAR[]))
GROUP BY run_id"""
"""Each listed run's last model reply: its stop reason, text and number of tool calls."""


def final_flags(store: Any, run_ids: list[str]) -> dict[str, str]:
    """The flag of each run whose last reply is not a plain answer (``empty``, ``refused``,
    ``length``, ``filtered``: :data:`lens.playback._answer.FLAG_WORDS`)."""
    from lens.playback._answer import flag_of

    out: dict[str, str] = {}
    for run_id, stop, content, calls in store.rows(_FINAL, [run_ids]):
        flag = flag_of(stop, content, int(calls or 0))
        if flag is not None:
            out[run_id] = flag
    return out


def add_filters(p: argparse.ArgumentParser) -> None:
    """The label and score filters of ``runs`` (the others are in ``lens.cli._main``)."""
    p.add_argument("--user", metavar="ID", help="only runs of this user id")
    p.add_argument("--session", metavar="ID", help="only runs of this session id")
    p.add_argument("--tag", action="append", metavar="TAG",
                   help="only runs carrying this tag (repeatable: all of them)")
    p.add_argument("--release", metavar="R", help="only runs of this release")
    p.add_argument("--env", metavar="E", help="only runs of this environment")
    p.add_argument("--score", action="append", metavar="NAME<OP>VALUE",
                   help="only runs whose latest score holds, e.g. 'helpful<1' or "
                        "'verdict=wrong' (OP: < <= > >= = !=; repeatable)")


def _query(args: argparse.Namespace) -> Any:
    from recorder import RunQuery

    return RunQuery(status=tuple(args.status or ()), model=args.model, since=args.since,
                    until=args.until, answer=args.search, user=args.user,
                    session=args.session, tags=tuple(args.tag or ()), release=args.release,
                    environment=args.env, scores=tuple(args.score or ()),
                    limit=min(args.limit or 10**9, 10**9))  # 0: every run, as sql --limit


def _scores(value: Any) -> str:
    pairs = value.items() if isinstance(value, dict) else value or ()
    return " ".join(f"{k}={v:g}" for k, v in pairs)


def _unknown_scores(store: Any, query: Any) -> None:
    """After "no runs match": the score names filtered on that no run has, if any."""
    from footprint._errors import did_you_mean
    from recorder.store._runlist import unknown_scores

    unknown, known = unknown_scores(store, query)
    for name in unknown:
        have = f"the scores runs have: {', '.join(known)}" if known else "no run has a score yet"
        print(f"no run has a score named {name!r}{did_you_mean(name, known)}; {have}")


def run(args: argparse.Namespace) -> int:
    from recorder import RunQuery, count_runs, list_runs
    from recorder.store._prices import usd

    query = _query(args)  # bad filter text fails before the store is opened
    store = open_from(args)
    found = list_runs(store, query).select([*_COLUMNS, "scores"]).to_pylist()
    if not found:
        filtered = dataclasses.replace(query, limit=RunQuery().limit) != RunQuery()
        print(f"no runs {'match those filters ' if filtered else ''}in {store.root}")
        _unknown_scores(store, query)
        return 0
    flags = final_flags(store, [r["run_id"] for r in found])
    if args.format != "table":
        _print_records(list(reversed(found)), flags, args.format)
    else:
        _print_table(found, flags, usd)
    total = count_runs(store, query) if len(found) == query.limit else len(found)
    if total > len(found):
        note = f"({len(found)} newest of {total} matching runs; --limit N shows more)"
        print(note, file=sys.stderr if args.format != "table" else sys.stdout)
    return 0


def _print_table(found: list[dict[str, Any]], flags: dict[str, str], usd: Any) -> None:
    scored = any(r["scores"] for r in found)
    flagged = bool(flags)
    rows = [[r["run_id"], r["started"].strftime("%Y-%m-%d %H:%M:%S"),
             *(r[c] for c in _COLUMNS[2:5]), usd(r["cost_usd"], r["unpriced_calls"]),
             *(r[c] for c in _COLUMNS[5:9]), _error(r),
             *([flags.get(r["run_id"], "")] if flagged else []),
             *([_scores(r["scores"])] if scored else [])] for r in reversed(found)]
    heads = (*_HEADS, *(["flag"] if flagged else []), *(["scores"] if scored else []))
    print(table(heads, rows, width=48))


def _print_records(found: list[dict[str, Any]], flags: dict[str, str], form: str) -> None:
    """Every column whole (no cell cut): ``json`` one list, ``jsonl`` an object a line,
    ``csv`` a header line then a line a run (scores as ``name=value`` pairs)."""
    records = [{**{c: jsonable(r[c]) for c in (*_COLUMNS, "scores")},
                "flag": flags.get(r["run_id"])} for r in found]
    if form == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow((*_COLUMNS, "flag", "scores"))
        for rec, r in zip(records, found, strict=True):
            writer.writerow([*(rec[c] for c in _COLUMNS), rec["flag"] or "",
                             _scores(r["scores"])])
    elif form == "json":
        print(json.dumps(records, ensure_ascii=False))
    else:
        for rec in records:
            print(json.dumps(rec, ensure_ascii=False))
