"""Every CLI command fed bad input: no traceback, one line on stderr, a documented exit code.

The table names bad inputs per command; a test checks that every command the
parser knows has rows, so a new command needs them too. ``{store}`` is a store
with one recorded run, ``{file}`` a plain file, ``{missing}`` a path that does
not exist.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from footprint.agent import SeededIds
from lens._examples.support_desk import make_agent
from lens.cli import build_parser, main
from lens.cli._exits import EXIT_CODES
from recorder import ParquetSink, Recorder

HUGE = "9" * 40
DESK = "lens._examples.support_desk:make_agent"

# (argv, expected exit code)
CASES: list[tuple[str, list[str], int]] = [
    ("(none)", ["--no-such-flag"], 2),
    ("(none)", ["no-such-command"], 2),
    ("demo", ["demo", "--store", "{file}"], 2),
    ("demo", ["demo", "--store", "{file}/below"], 2),
    ("demo", ["demo", "--store", "/sys/footprint-store"], 3),
    ("demo", ["demo", "--clean", "--store", "{file}"], 2),
    ("demo", ["demo", "--bogus"], 2),
    ("runs", ["runs", "--limit", HUGE, "--store", "{store}"], 2),
    ("runs", ["runs", "--limit", "-1", "--store", "{store}"], 2),
    ("runs", ["runs", "--limit", "ten", "--store", "{store}"], 2),
    ("runs", ["runs", "--store", "{missing}"], 2),
    ("runs", ["runs", "--store", "{file}"], 2),
    ("runs", ["runs", "--status", "done", "--store", "{store}"], 2),
    ("runs", ["runs", "--since", "yesterday", "--store", "{store}"], 2),
    ("runs", ["runs", "--until", "2026-13-45", "--store", "{store}"], 2),
    ("show", ["show", "nope", "--store", "{store}"], 2),
    ("show", ["show", "", "--store", "{store}"], 2),
    ("show", ["show", "last", "--store", "{missing}"], 2),
    ("show", ["show"], 2),
    ("sql", ["sql", "", "--store", "{store}"], 2),
    ("sql", ["sql", "   ", "--store", "{store}"], 2),
    ("sql", ["sql", ";", "--store", "{store}"], 2),
    ("sql", ["sql", "SELEC 1", "--store", "{store}"], 2),
    ("sql", ["sql", "SELECT nope FROM nowhere", "--store", "{store}"], 2),
    ("sql", ["sql", "SELECT 'x'::INTEGER", "--store", "{store}"], 2),
    ("sql", ["sql", "DROP VIEW events", "--store", "{store}"], 2),
    ("sql", ["sql", "SELECT * FROM read_csv('/etc/passwd')", "--store", "{store}"], 2),
    ("sql", ["sql", "SELECT 1", "--format", "xml", "--store", "{store}"], 2),
    ("sql", ["sql", "SELECT 1", "--store", "{missing}"], 2),
    ("verify", ["verify", "nope", "--store", "{store}"], 2),
    ("verify", ["verify", HUGE, "--store", "{store}"], 2),
    ("verify", ["verify", "last", "--store", "{missing}"], 2),
    ("export-otlp", ["export-otlp", "nope", "--store", "{store}"], 2),
    ("export-otlp", ["export-otlp", "last", "--header", "novalue", "--store", "{store}"], 2),
    ("export-otlp", ["export-otlp", "last", "--timeout", "nan", "--store", "{store}"], 2),
    ("export-otlp", ["export-otlp", "last", "--timeout", "-1", "--store", "{store}"], 2),
    ("export-otlp", ["export-otlp", "last", "--timeout", HUGE, "--store", "{store}"], 2),
    ("export-otlp", ["export-otlp", "last", "--endpoint", "not a url", "--store", "{store}"], 2),
    ("feedback", ["feedback", "last", "--store", "{store}"], 2),
    ("feedback", ["feedback", "last", "--name", "helpful", "--value", "lots", "--store",
                  "{store}"], 2),
    ("feedback", ["feedback", "nope", "--name", "helpful", "--value", "0", "--store",
                  "{store}"], 2),
    ("feedback", ["feedback", "last", "--name", "helpful", "--store", "{missing}"], 2),
    ("evaluate", ["evaluate", "--store", "{store}"], 2),
    ("evaluate", ["evaluate", "--judge", "nope", "--store", "{store}"], 2),
    ("evaluate", ["evaluate", "--judge", "no_such_module:judge", "--store", "{store}"], 2),
    ("evaluate", ["evaluate", "--judge", "m:f", "--where", "score=helpful<<1", "--store",
                  "{store}"], 2),
    ("compact", ["compact", "--store", "{missing}"], 2),
    ("compact", ["compact", "extra", "--store", "{store}"], 2),
    ("lens", ["lens", "nope", "--store", "{store}"], 2),
    ("lens", ["lens", "--store", "{missing}"], 2),
    ("lens", ["lens", "--serve", "--host", "0.0.0.0", "--store", "{store}"], 2),
    ("lens", ["lens", "--serve", "--token", "short", "--store", "{store}"], 2),
    ("lens", ["lens", "--serve", "--token", "t" * 19 + "!", "--store", "{store}"], 2),
    ("lens", ["lens", "--serve", "--allow-remote", "--token", "short", "--store", "{store}"], 2),
    ("lens", ["lens", "--serve", "--port", "70000", "--store", "{store}"], 2),
    ("lens", ["lens", "--serve", "nope", "--store", "{store}"], 2),
    ("lens", ["lens", "last", "--view", "trends", "--store", "{store}"], 2),
    ("lens", ["lens", "last", "--host", "0.0.0.0", "--store", "{store}"], 2),
    ("stats", ["stats", "--by", "week", "--store", "{store}"], 2),
    ("stats", ["stats", "--group-by", "users", "--store", "{store}"], 2),
    ("stats", ["stats", "--last", "0", "--store", "{store}"], 2),
    ("stats", ["stats", "--since", "yesterday", "--store", "{store}"], 2),
    ("stats", ["stats", "--store", "{missing}"], 2),
    ("replay", ["replay", "last", "--agent", "no_such_module:make", "--store", "{store}"], 2),
    ("replay", ["replay", "last", "--agent", "nocolon", "--store", "{store}"], 2),
    ("replay", ["replay", "last", "--agent", "os:sep", "--store", "{store}"], 2),
    ("replay", ["replay", "nope", "--agent", DESK, "--store", "{store}"], 2),
    ("diff", ["diff", "nope", "last", "--store", "{store}"], 2),
    ("diff", ["diff", "last", "--store", "{store}"], 2),
    ("why", ["why", "nope", "--store", "{store}"], 2),
    ("why", ["why", "last", "--seeds", HUGE, "--agent", DESK, "--store", "{store}"], 2),
    ("why", ["why", "last", "--seeds", "-3", "--agent", DESK, "--store", "{store}"], 2),
    ("why", ["why", "last", "--budget", "-1", "--store", "{store}"], 2),
    ("why", ["why", "last", "--step", "llm#999", "--store", "{store}"], 2),
    ("why", ["why", "last", "--agent", "no_such_module:make", "--store", "{store}"], 2),
    ("doctor", ["doctor", "--store", "{missing}"], 2),
    ("doctor", ["doctor", "--store", "{file}"], 2),
    ("doctor", ["doctor", "--bogus"], 2),
    ("graph", ["graph", "no_such_module:graph"], 2),
    ("graph", ["graph", "nocolon"], 2),
    ("graph", ["graph", "os:sep"], 2),
    ("snapshot", ["snapshot", "nope", "--agent", DESK, "-o", "{missing}", "--store", "{store}"],
     2),
    ("snapshot", ["snapshot", "last", "--agent", "no_such_module:make", "-o", "{missing}",
                  "--store", "{store}"], 2),
    ("snapshot", ["snapshot", "last", "--agent", DESK, "-o", "{file}", "--store", "{store}"], 3),
    ("snapshot", ["snapshot", "last", "--agent", DESK], 2),
    ("receive", ["receive", "--host", "0.0.0.0", "--store", "{missing}"], 2),
    ("receive", ["receive", "--port", "70000", "--store", "{missing}"], 2),
    ("receive", ["receive", "--port", "http", "--store", "{missing}"], 2),
    ("receive", ["receive", "--store", "{file}"], 2),
    ("ingest", ["ingest", "--store", "{missing}"], 2),
    ("ingest", ["ingest", "{missing}", "--store", "{missing}"], 2),
    ("ingest", ["ingest", "{file}", "--remap", "--store", "{missing}"], 2),
    ("ingest", ["ingest", "{file}", "--store", "{missing}"], 1),
    ("dataset", ["dataset"], 2),
    ("dataset", ["dataset", "create", "d", "--store", "{store}"], 2),
    ("dataset", ["dataset", "create", "d", "--from-runs", "--score", "x<<1", "--store",
                 "{store}"], 2),
    ("dataset", ["dataset", "create", "bad name", "--from-runs", "--store", "{store}"], 2),
    ("dataset", ["dataset", "create", "d", "--from-runs", "--release", "none", "--store",
                 "{store}"], 2),
    ("dataset", ["dataset", "add", "nope", "last", "--store", "{store}"], 2),
    ("dataset", ["dataset", "show", "nope", "--store", "{store}"], 2),
    ("dataset", ["dataset", "show", "nope", "--version", "0", "--store", "{store}"], 2),
    ("dataset", ["dataset", "list", "--store", "{missing}"], 2),
    ("experiment", ["experiment", "run", "nope", "--agent", DESK, "--store", "{store}"], 2),
    ("experiment", ["experiment", "run", "nope", "--store", "{store}"], 2),
    ("experiment", ["experiment", "compare", "a", "b", "--store", "{store}"], 2),
    ("experiment", ["experiment", "compare", "a", "--store", "{store}"], 2),
    ("experiment", ["experiment", "list", "--store", "{missing}"], 2),
]


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("fuzz")
    store = root / "store"
    with Recorder(sinks=[ParquetSink(store)]) as recorder:
        make_agent(sink=recorder, ids=SeededIds(5)).answer()
    file = root / "a-file"
    file.write_text("not a store")
    return {"store": str(store), "file": str(file), "missing": str(root / "missing")}


def _commands() -> set[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_given_the_parser_when_its_commands_are_listed_then_each_has_bad_input_cases() -> None:
    covered = {name for name, _, _ in CASES}
    missing = sorted(_commands() - covered)
    assert missing == [], f"add bad-input rows to CASES for: {missing}"


@pytest.mark.parametrize(("command", "argv", "code"), CASES,
                         ids=[" ".join(a)[:60] for _, a, _ in CASES])
def test_given_bad_input_when_the_command_runs_then_one_line_and_a_documented_code(
    paths: dict[str, str], capsys: pytest.CaptureFixture[str],
    command: str, argv: list[str], code: int,
) -> None:
    filled = [a.format(**paths) for a in argv]
    try:
        got = main(filled)
    except SystemExit as exc:  # argparse usage errors exit from inside parse_args
        got = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert got in {c for c, _ in EXIT_CODES}
    assert got == code, err
    assert err.count("\n") == 1 and err.startswith("footprint"), err
    assert not Path(paths["missing"]).exists()
