"""The check-up tells the truth: ``All`` shadowing, islands, shadowed examples, no ``..``,
and ``footprint graph`` prints it (a golden text)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from footprint import ConfigError, define_skill, skill_graph
from footprint.graph import Regex
from footprint.injection import InjectionContext

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "checkup_truths.txt"
sys.path.insert(0, str(Path(__file__).parent))

from checkup_truths import graph  # noqa: E402


def _problems(code: str) -> list[tuple[str | None, str | None, str | None]]:
    return [(p.skill, p.from_skill, p.to) for p in graph.checkup().problems if p.code == code]


def test_given_identical_and_narrower_all_rules_when_checked_then_both_are_shadowed() -> None:
    assert _problems("rules-shadowed-by-order") == [("b", "a", None), ("c", "a", None)]


def test_given_a_skill_reached_only_from_an_island_when_checked_then_the_message_says_so(
) -> None:
    (problem,) = [p for p in graph.checkup().problems
                  if p.code == "unreachable-skill" and p.skill == "cove"]
    assert "the routes into it start at 'island'" in problem.message
    assert "read_skill gate refuses it" in problem.message
    assert "no route leads to it" not in problem.message


def test_given_an_example_claimed_earlier_when_checked_then_to_names_the_shadowed_rule() -> None:
    assert _problems("example-shadowed-by-earlier") == [("c", "a", "c")]


def test_given_a_failing_check_up_when_built_then_the_error_has_no_double_period() -> None:
    a, b = define_skill("a", "first", "Do a."), define_skill("b", "second", "Do b.")
    with pytest.raises(ConfigError) as raised:
        skill_graph(a, b).entry(a).route(a, b, on_tool_return="t",
                                         guard={"n": {"gt": 5, "lt": 3}}).build()
    assert ".." not in str(raised.value).replace("...", "")


def test_given_a_zero_width_entry_match_when_routed_then_no_witness_is_recorded() -> None:
    a = define_skill("a", "first", "Do a.")
    g = skill_graph(a).entry(a, match=Regex("(?=refund)")).build(check="off")
    move = g.explain_next_skill(InjectionContext(iteration=1, user_message="refund please"))
    assert move.to == "a" and move.witness is None


def test_given_the_truths_graph_when_footprint_graph_prints_it_then_it_matches_the_golden(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)])}
    out = subprocess.run([sys.executable, "-m", "lens.cli", "graph", "checkup_truths:graph"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    if os.environ.get("FOOTPRINT_UPDATE_GOLDEN"):
        GOLDEN.write_text(out.stdout, encoding="utf-8")
    assert out.stdout == GOLDEN.read_text(encoding="utf-8")
    assert ".." not in out.stdout.replace("...", "")
