"""``footprint sql QUERY [--format table|csv|json] [--limit N] [--timeout SECONDS]``.

At most ``--limit`` rows (default 10,000) are fetched: a query over millions
of rows answers at once instead of gathering gigabytes first; a note on
stderr says when the result was cut. A query still running after
``--timeout`` seconds (default 60; 0: no limit) is stopped (exit 2).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys

from lens.cli._common import jsonable, open_from, table

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    import duckdb

    from footprint._errors import ConfigError
    from recorder import SqlRefused, SqlTimeout
    from recorder.store._sandbox import VIEW_NAMES

    store = open_from(args)
    cap = args.limit or None
    try:  # the SQL sandbox: one read-only query; one row past the cap shows a cut
        relation = store.sql(args.query, limit=None if cap is None else cap + 1,
                             timeout=args.timeout or None)
        columns = list(relation.columns)
        rows = relation.fetchall()
    except SqlRefused:
        raise
    except SqlTimeout as exc:
        raise SqlTimeout(exc.limit, "pass --timeout SECONDS for a longer limit (--timeout 0: "
                                    "none)") from None
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"query failed: {first}; the views are {VIEW_NAMES}") from exc
    cut = cap is not None and len(rows) > cap
    rows = rows[:cap] if cut else rows
    _print(args.format, columns, rows)
    if cut:
        from lens.cli._exits import say

        say(f"footprint sql: only the first {cap:,} rows are shown; pass --limit N for more "
            "(--limit 0: every row)")
    return 0


def _print(form: str, columns: list[str], rows: list[tuple[object, ...]]) -> None:
    if form == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    elif form == "json":
        records = [{c: jsonable(v) for c, v in zip(columns, r, strict=True)} for r in rows]
        print(json.dumps(records, ensure_ascii=False))
    else:
        print(table(columns, rows))
        print(f"({len(rows)} rows)")
