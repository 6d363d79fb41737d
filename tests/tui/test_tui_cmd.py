"""``footprint lens``: its parser, its errors before the screen is taken, and lazy Textual."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from footprint._errors import ConfigError
from lens.cli import _lens as _cmd_lens
from lens.tui import LensApp

ROOT = Path(__file__).resolve().parents[2]


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="footprint")
    _cmd_lens.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["lens", *argv])


def test_given_the_lens_parser_when_arguments_are_parsed_then_run_follow_and_store_are_read(
) -> None:
    args = _parse("last", "--follow", "--store", "/x")
    assert (args.command, args.run, args.follow, args.store) == ("lens", "last", True, "/x")
    bare = _parse()
    assert (bare.run, bare.follow, bare.store) == (None, False, None)


def test_given_a_bad_store_or_run_when_lens_runs_then_a_config_error_comes_first(
    tmp_path: Path, desk_store: tuple[Path, str],
) -> None:
    with pytest.raises(ConfigError, match="no footprint store"):
        _cmd_lens.run(_parse("--store", str(tmp_path / "nope")))
    with pytest.raises(ConfigError, match="no run 'zzz'"):
        _cmd_lens.run(_parse("zzz", "--store", str(desk_store[0])))


def test_given_a_good_run_when_lens_runs_then_the_app_opens_on_it_with_follow(
    desk_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[tuple[str | None, bool]] = []

    def fake_run(self: LensApp, **_: object) -> None:
        opened.append((self.state.run_id, self.follow))

    monkeypatch.setattr(LensApp, "run", fake_run)
    monkeypatch.setattr(_cmd_lens, "has_terminal", lambda: True)
    code = _cmd_lens.run(_parse(desk_store[1][:8], "--follow", "--store", str(desk_store[0])))
    assert code == 0 and opened == [(desk_store[1], True)]


def test_given_a_fresh_interpreter_when_the_lens_command_module_loads_then_textual_does_not(
) -> None:
    probe = ("import sys, lens.cli._lens\n"
             "print(sorted(m for m in ('textual', 'duckdb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("agent", "says"), [
    ("make_agent", "--agent 'make_agent' is not MODULE:ATTR; write e.g. "
                   "'examples/planted/wrong_fact.py:make_agent'"),
    ("examples/planted/nope.py:make_agent", "--agent file 'examples/planted/nope.py' does not "
                                            "exist; give a path to a .py file"),
])
def test_given_a_bad_agent_reference_when_lens_runs_then_one_line_and_exit_2(
    desk_store: tuple[Path, str], agent: str, says: str,
) -> None:
    out = subprocess.run([sys.executable, "-m", "lens.cli", "lens", "--agent", agent,
                          "--store", str(desk_store[0])], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=False)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and says in out.stderr


def test_given_an_agent_reference_when_lens_runs_then_the_app_holds_it(
    desk_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    held: list[str | None] = []
    monkeypatch.setattr(LensApp, "run", lambda self, **_: held.append(self.state.agent))
    monkeypatch.setattr(_cmd_lens, "has_terminal", lambda: True)
    monkeypatch.chdir(ROOT)
    ref = "examples/planted/wrong_fact.py:make_agent"
    assert _cmd_lens.run(_parse("--agent", ref, "--store", str(desk_store[0]))) == 0
    assert _cmd_lens.run(_parse("--agent", "lens._examples.support_desk:make_agent",
                                "--store", str(desk_store[0]))) == 0
    assert held == [ref, "lens._examples.support_desk:make_agent"]
