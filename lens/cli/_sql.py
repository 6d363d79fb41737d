"""``footprint sql QUERY [--format table|csv|json]``."""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import sys

from lens.cli._common import open_from, table

__all__ = ["run"]


def _jsonable(value: object) -> object:
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, int | float | str | bool | type(None) | list | dict):
        return value
    return str(value)


def run(args: argparse.Namespace) -> int:
    import duckdb

    from footprint._errors import ConfigError
    from recorder import SqlRefused

    store = open_from(args)
    try:
        relation = store.sql(args.query)  # the SQL sandbox: one read-only query
        columns = list(relation.columns)
        rows = relation.fetchall()
    except SqlRefused:
        raise
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"query failed: {first}; the views are events, runs, decisions, injections, "
            "llm_calls, tool_calls, rejections, escalations, route_conflicts, run_sources, blobs"
        ) from exc
    if args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    elif args.format == "json":
        records = [{c: _jsonable(v) for c, v in zip(columns, r, strict=True)} for r in rows]
        print(json.dumps(records, ensure_ascii=False))
    else:
        print(table(columns, rows))
        print(f"({len(rows)} rows)")
    return 0
