"""The ``footprint`` command line. Imports stay lazy so ``--help`` is fast."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["build_parser", "main"]

# command -> module implementing ``run(args) -> int`` (imported only when used)
_COMMANDS = {
    "demo": "lens.cli._demo",
    "runs": "lens.cli._runs",
    "show": "lens.cli._show",
    "sql": "lens.cli._sql",
    "verify": "lens.cli._verify",
    "export-otlp": "lens.cli._export_otlp",
    "lens": "lens.cli._lens",
    "replay": "lens.cli._replay",
    "diff": "lens.cli._diff",
    "why": "lens.cli._why",
    "graph": "lens.cli._graph",
    "doctor": "lens.cli._doctor",
    "compact": "lens.cli._compact",
    "snapshot": "lens.cli._snapshot",
    "stats": "lens.cli._stats",
    "receive": "lens.cli._receive",
    "ingest": "lens.cli._ingest",
    "feedback": "lens.cli._feedback",
    "evaluate": "lens.cli._evaluate",
    "dataset": "lens.cli._dataset",
    "experiment": "lens.cli._experiment",
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
    parser, sub = _root()
    _add_store_commands(sub)
    for name in _OWN_PARSERS:
        importlib.import_module(_COMMANDS[name]).add_parser(sub)
    _epilogs(sub)
    return parser


_OWN_PARSERS = ("export-otlp", "lens", "replay", "diff", "why", "graph", "snapshot", "doctor",
                "stats", "receive", "ingest", "feedback", "evaluate", "compact", "dataset",
                "experiment")
"""The commands whose module registers its own parser, in ``--help``'s order."""


def _parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser ``argv`` needs: when it starts with a command of :data:`_OWN_PARSERS`,
    the root with that command's alone (no other command's module imported, ~40 ms),
    else :func:`build_parser`'s whole tree."""
    if not argv or argv[0] not in _OWN_PARSERS:
        return build_parser()
    parser, sub = _root()
    importlib.import_module(_COMMANDS[argv[0]]).add_parser(sub)
    _epilogs(sub)
    return parser


def _root() -> tuple[argparse.ArgumentParser, Any]:
    """The ``footprint`` parser and its (empty) sub-parsers action."""
    from lens.cli._exits import epilog

    parser = _Parser(
        prog="footprint",
        description="Explainable agent runs: record, query and explain every decision.",
        epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the installed version and exit")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)


def _epilogs(sub: Any) -> None:
    from lens.cli._exits import short_epilog

    for p in sub.choices.values():
        p.epilog = p.epilog or short_epilog()


def _add_store_commands(sub: Any) -> None:
    """``demo``, ``runs``, ``show``, ``sql`` and ``verify``: the commands whose options live
    here (every other command registers its own parser)."""
    demo = sub.add_parser(
        "demo", help="run the bundled support-desk agent offline into the store, then explain it"
    )
    demo.add_argument("--clean", action="store_true", help="delete the store's runs first")
    runs = _add_runs(sub)
    show = sub.add_parser("show", help="a readable timeline of one run")
    show.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    sql = _add_sql(sub)
    verify = _add_verify(sub)
    for p in (demo, runs, show, sql, verify):
        _store_option(p)


def _add_runs(sub: Any) -> Any:
    """``runs``: the run list, its filters and its output format."""
    from lens.cli._common import MAX_COUNT, count_arg

    runs = sub.add_parser("runs", help="list the recorded runs, newest last")
    runs.add_argument("--limit", type=count_arg(0, MAX_COUNT), default=50, metavar="N",
                      help="show at most N runs (default 50; 0: every run)")
    runs.add_argument("--status", action="append", choices=("complete", "failed", "incomplete"),
                      help="only runs with this status (repeatable)")
    runs.add_argument("--model", metavar="TEXT", help="only runs whose model name contains TEXT")
    runs.add_argument("--since", metavar="AGE|DATE",
                      help="only runs started on or after: an age (30m, 2h, 7d) or YYYY-MM-DD")
    runs.add_argument("--until", metavar="AGE|DATE",
                      help="only runs started on or before: an age (2h: two hours ago), "
                           "YYYY-MM-DD (the whole day) or YYYY-MM-DDTHH:MM")
    runs.add_argument("--search", metavar="TEXT", help="only runs whose answer contains TEXT")
    runs.add_argument("--format", choices=("table", "json", "jsonl", "csv"), default="table",
                      help="table: aligned, fitted to the terminal (default); json, jsonl, "
                           "csv: every column whole, for other tools")
    importlib.import_module("lens.cli._runs").add_filters(runs)
    return runs


def _add_sql(sub: Any) -> Any:
    """``sql``: a query over the store's views, with its output format, row cap and timeout."""
    from lens.cli._common import MAX_COUNT, count_arg, time_limit_arg

    sql = sub.add_parser("sql", help="run SQL over the store's views (events, runs, …)")
    sql.add_argument("query", metavar="QUERY", help="a DuckDB SQL query")
    sql.add_argument("--format", choices=("table", "csv", "json"), default="table")
    sql.add_argument("--limit", type=count_arg(0, MAX_COUNT), default=10_000, metavar="N",
                     help="print at most N rows (default 10,000; 0: every row); a note on "
                          "stderr says when rows were cut")
    sql.add_argument("--timeout", type=time_limit_arg, default=60.0, metavar="SECONDS",
                     help="stop the query after SECONDS (default 60; 0: no limit)")
    return sql


def _add_verify(sub: Any) -> Any:
    """``verify``: a run's hash chain, or (``--records``) every dataset and experiment file."""
    from lens.cli._common import key_file_option

    verify = sub.add_parser("verify", help="check a run's SHA-256 hash chain (--records: "
                                           "every dataset and experiment file)")
    verify.add_argument("run", metavar="RUN", nargs="?", default=None,
                        help="a run id, a unique prefix, or 'last'")
    verify.add_argument("--records", action="store_true",
                        help="check every dataset version and experiment file: their chains, "
                             "and the journal that lists them (a deleted or replaced file)")
    key_file_option(verify, "every head must then be its HMAC")
    return verify


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked (the package
    metadata costs ~30 ms to import and search, on every command otherwise)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"footprint {_version()}")
        parser.exit(0)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("footprint-lens")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _tune_process() -> None:
    """Settings for the ``footprint`` process itself, never for a host calling :func:`main`.

    Collect cycles less often (``recorder.store._owned.tune_collector``). Arrow's
    jemalloc pool (where the wheel has it: Linux) hands freed memory back to the
    system sooner than the default pool: reading a killed writer's 600k-event
    segment peaked ~80 MB lower. ``ARROW_DEFAULT_MEMORY_POOL`` still wins when set.
    Unencodable output is escaped (:func:`_escape_unencodable`).
    """
    from recorder.store._owned import tune_collector

    _escape_unencodable()
    tune_collector()
    if sys.platform == "linux" and "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"  # in every Linux wheel


def _escape_unencodable() -> None:
    """A character the output's encoding lacks (``PYTHONIOENCODING=ascii``, a C locale) is
    printed as its escape (``\\u2026``), never a crash: the one place that says so."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a closed or detached stream
                reconfigure(errors="backslashreplace")


def _run(argv: Sequence[str]) -> int:
    parser = _parser_for(argv)
    for text in argv:  # bytes that are not UTF-8 reach Python as lone surrogates
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            shown = repr(text.encode("utf-8", "surrogateescape"))[2:-1]
            parser.error(f"argument '{shown[:60]}' is not valid UTF-8; pass text in UTF-8")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    module = importlib.import_module(_COMMANDS[args.command])
    code: int = module.run(args)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure is one line on stderr and an exit code of
    ``lens.cli._exits.EXIT_CODES`` (listed in ``--help``), never a traceback."""
    from lens.cli._exits import INTERRUPTED, guarded, say  # the standard library only

    given = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        _tune_process()
    try:  # argv None: the footprint executable, which owns the process and its signals
        return guarded(_command_of(given), lambda: _run(given), owns_process=argv is None)
    except SystemExit as exc:  # argparse: --help, --version, a usage error
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    except KeyboardInterrupt:  # Ctrl-C in the instant the guard was finishing
        say(f"footprint {_command_of(given)}: interrupted".replace(" :", ":"))
        return INTERRUPTED


def _command_of(argv: Sequence[str]) -> str:
    """The command named in ``argv`` (for the one-line messages), or ''."""
    return next((a for a in argv if a in _COMMANDS), "")

