"""``footprint COMMAND``: the parser holds that command's alone (no other command's
module imported), and it reads the arguments as the whole tree does."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from lens.cli._main import _OWN_PARSERS, _parser_for, build_parser


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", _OWN_PARSERS)
def test_given_a_command_when_its_parser_is_built_alone_then_its_help_is_the_whole_trees(
    command: str,
) -> None:
    alone = _commands(_parser_for([command, "--help"]))
    assert list(alone) == [command]
    assert alone[command].format_help() == _commands(build_parser())[command].format_help()


def test_given_no_command_when_the_parser_is_built_then_every_command_is_there() -> None:
    assert set(_OWN_PARSERS) < set(_commands(_parser_for(["--help"])))


def test_given_footprint_stats_when_parsed_then_no_other_command_module_is_imported() -> None:
    code = ("import json, sys; from lens.cli._main import _parser_for; _parser_for(['stats']); "
            "print(json.dumps([m for m in sys.modules if m.startswith('lens.cli._')]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    loaded = json.loads(done.stdout)
    assert "lens.cli._stats" in loaded and "lens.cli._receive" not in loaded
