"""The ``footprint`` command line. Imports stay lazy so ``--help`` is fast."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["build_parser", "main"]

# command -> module implementing ``run(args) -> int`` (imported only when used)
_COMMANDS = {
    "demo": "lens._cmd_demo",
    "runs": "lens._cmd_runs",
    "show": "lens._cmd_show",
    "sql": "lens._cmd_sql",
    "verify": "lens._cmd_verify",
    "export-otlp": "lens._cmd_export_otlp",
    "lens": "lens._cmd_lens",
    "replay": "lens._cmd_replay",
    "diff": "lens._cmd_diff",
    "why": "lens._cmd_why",
    "graph": "lens._cmd_graph",
    "snapshot": "lens._cmd_snapshot",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"footprint: error: {message} (see `{self.prog} --help`)\n")


def _store_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store", metavar="DIR", default=None,
        help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="footprint",
        description="Explainable agent runs: record, query and explain every decision.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = sub.add_parser(
        "demo", help="run the bundled support-desk agent offline into the store, then explain it"
    )
    demo.add_argument("--clean", action="store_true", help="delete the store's runs first")
    runs = sub.add_parser("runs", help="list the recorded runs, newest last")
    runs.add_argument("--limit", type=int, default=50, help="show at most N runs (default 50)")
    show = sub.add_parser("show", help="a readable timeline of one run")
    show.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    sql = sub.add_parser("sql", help="run SQL over the store's views (events, runs, …)")
    sql.add_argument("query", metavar="QUERY", help="a DuckDB SQL query")
    sql.add_argument("--format", choices=("table", "csv", "json"), default="table")
    verify = sub.add_parser("verify", help="check a run's SHA-256 hash chain")
    verify.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    for p in (demo, runs, show, sql, verify):
        _store_option(p)
    importlib.import_module("lens._cmd_export_otlp").add_parser(sub)
    for name in ("lens", "replay", "diff", "why", "graph", "snapshot"):
        importlib.import_module(f"lens._cmd_{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    module = importlib.import_module(_COMMANDS[args.command])
    from footprint._errors import FootprintError

    try:
        code: int = module.run(args)
    except FootprintError as exc:
        print(f"footprint {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
