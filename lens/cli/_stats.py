"""``footprint stats``: trends over the store's runs — a table per time bucket, and plots.

Latency percentiles, tokens, error rate and decision counts (and cost, when
the store prices its model calls) per day or hour of the runs' start, split by
model (per call), skill, release, user, tag or environment; one aggregate query
over the runs' outlines (``recorder.store._trends``). The plots are ``plotext`` line charts, drawn
under the table unless ``--no-plot``; ``--format json`` prints the rows.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from lens.cli._common import MAX_COUNT, count_arg, open_from, terminal_safe

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``stats`` on the ``footprint`` sub-parsers."""
    p = sub.add_parser(
        "stats", help="trends: latency, tokens, errors, decisions (and cost) per day or hour",
        description="Trends over the recorded runs, per day or hour of their start: runs, "
                    "error rate (failed / runs), latency p50/p90/p99 of the runs that ended, "
                    "tokens, decisions (and cost when the store prices its model calls), "
                    "with terminal plots.")
    p.add_argument("--by", choices=("day", "hour"), default="day",
                   help="the time bucket (default day)")
    p.add_argument("--group-by", choices=("model", "skill", "release", "user", "tag", "env"),
                   default=None,
                   help="split each bucket: by model (each call's own tokens and cost), by "
                        "skill activated, release, user, tag or environment (a run counts in "
                        "every group it belongs to)")
    p.add_argument("--since", metavar="AGE|DATE",
                   help="only runs started on or after: an age (7d) or YYYY-MM-DD[THH:MM]")
    p.add_argument("--until", metavar="AGE|DATE",
                   help="only runs started on or before: an age, YYYY-MM-DD (the whole day) "
                        "or YYYY-MM-DDTHH:MM")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: a table and plots (default); json: one object per row")
    p.add_argument("--last", type=count_arg(1, MAX_COUNT), default=30, metavar="N",
                   help="the table shows the newest N buckets (default 30; the plots and "
                        "--format json show all)")
    p.add_argument("--no-plot", action="store_true", help="the table only")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    from recorder import RunQuery, TrendQuery, trends

    store = open_from(args)
    store.con.execute("SET enable_progress_bar = false")  # DuckDB's bar would land in stdout
    query = TrendQuery(by=args.by, group_by=args.group_by,
                       runs=RunQuery(since=args.since, until=args.until))
    table = trends(store, query)
    if args.format == "json":
        for row in table.to_pylist():
            print(json.dumps({**row, "bucket": row["bucket"].isoformat()}))
        return 0
    if table.num_rows == 0:
        filtered = args.since or args.until
        print(f"no runs {'match those filters ' if filtered else ''}in {store.root}")
        return 0
    rows = table.to_pylist()
    _print_table(_newest(rows, args.last), priced="cost_usd" in table.column_names,
                 grouped=args.group_by is not None, by=args.by)
    buckets = len(set(table.column("bucket").to_pylist()))
    if buckets > args.last:
        print(f"({args.last} newest of {buckets} {args.by}s; --last N shows more)")
    if not args.no_plot:
        print(_plots(table, args.by))
    return 0


def _newest(rows: list[dict[str, Any]], last: int) -> list[dict[str, Any]]:
    """The rows of the newest ``last`` buckets (the rows are oldest first)."""
    keep = set(sorted({r["bucket"] for r in rows})[-last:])
    return [r for r in rows if r["bucket"] in keep]


def _ms(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _cost(row: dict[str, Any]) -> str:
    """The priced runs' USD as ``footprint runs`` prints a cost (a cent's fraction is not
    rounded away to ``$0.0000``), then how many runs had an unpriced call."""
    from recorder.store._prices import usd

    text = "—" if row["cost_usd"] is None else usd(row["cost_usd"])
    return text + (f" +{row['unpriced']} unpriced" if row["unpriced"] else "")


_LEFT = ("bucket", "group")
_WIDTH = 100
"""The narrowest console the table is drawn for."""


def _print_table(rows: list[dict[str, Any]], *, priced: bool, grouped: bool, by: str) -> None:
    heads = ["bucket", *(["group"] if grouped else []), "runs", "errors", "p50 ms", "p90 ms",
             "p99 ms", "tokens", "tok/run", "decisions", *(["cost"] if priced else [])]
    stamp = "%Y-%m-%d %H:00" if by == "hour" else "%Y-%m-%d"
    cells = [[r["bucket"].strftime(stamp), *([terminal_safe(r["group"] or "—")] if grouped else []),
              f"{r['runs']:,}", f"{r['error_rate']:.1%}", _ms(r["p50_ms"]), _ms(r["p90_ms"]),
              _ms(r["p99_ms"]), f"{r['tokens']:,}", f"{r['tokens_per_run']:,.0f}",
              f"{r['decisions']:,}", *([_cost(r)] if priced else [])] for r in rows]
    from rich.console import Console

    console = Console(highlight=False, markup=False)  # a group named "[beta]" is text
    if not console.is_terminal and all(_plain(cell) for row in cells for cell in row):
        print(_lines(heads, cells))  # what rich draws to a pipe, without its per-cell cost
        return
    view = _table(heads, cells)
    console.width = max(_WIDTH, console.width if console.is_terminal else _natural(view))
    console.print(view)


def _plain(cell: str) -> bool:
    """Whether rich draws ``cell`` as its characters, one column each: printable ASCII (or
    an em dash), no ``:emoji:`` code, no space at either end."""
    return (cell.replace("—", "").isascii() and cell.isprintable() and cell.count(":") < 2
            and cell == cell.strip())


def _lines(heads: list[str], cells: list[list[str]]) -> str:
    """The table as rich draws it unwrapped with no box: columns two spaces apart, ``bucket``
    and ``group`` left-justified, the others right-justified."""
    rows = [heads, *cells]
    widths = [max(len(row[i]) for row in rows) for i in range(len(heads))]
    left = [head in _LEFT for head in heads]
    return "\n".join("  ".join(c.ljust(w) if lj else c.rjust(w)
                                for c, w, lj in zip(row, widths, left, strict=True))
                      for row in rows)


def _table(heads: list[str], cells: list[list[str]]) -> Any:
    """A rich table of ``cells`` under ``heads``."""
    from rich.table import Table

    view = Table(box=None, header_style="bold", pad_edge=False)
    for head in heads:
        view.add_column(head, justify="left" if head in _LEFT else "right")
    for row in cells:
        view.add_row(*row)
    return view


def _natural(view: Any) -> int:
    """The width ``view`` takes unwrapped: a pipe or a file gets each row on one line."""
    from rich.console import Console
    from rich.measure import Measurement

    wide = Console(width=10_000)
    return Measurement.get(wide, wide.options, view).maximum


def _plots(table: Any, by: str) -> str:
    """Line charts of the series (one line per group), two a row."""
    import plotext as plt

    from lens.playback._trends import draw
    from recorder.store._trends import METRICS, trend_series

    labels, series = trend_series(table, by)
    series = {m: {terminal_safe(str(g)): v for g, v in lines.items()}  # groups in the legend
              for m, lines in series.items()}
    titles = dict(METRICS)
    shown = [m for m in ("p50_ms", "tokens_per_run", "error_rate", "decisions_per_run",
                         "cost_usd") if m in series]
    plt.clear_figure()
    rows = (len(shown) + 1) // 2
    plt.subplots(rows, 2)
    plt.plot_size(100, 12 * rows)
    for i, metric in enumerate(shown):
        plt.subplot(i // 2 + 1, i % 2 + 1)
        plt.title(titles[metric])
        draw(plt, labels, series[metric])
    text = str(plt.build())
    if sys.stdout.isatty():
        return text
    from rich.text import Text

    return Text.from_ansi(text).plain  # no colour codes in a file or a pipe

