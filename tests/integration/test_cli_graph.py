"""`footprint graph MODULE:ATTR`: the check-up and the Mermaid drawing of a skill graph."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BROKEN = '''
from footprint import define_skill, skill_graph

a = define_skill("a", "first", "Do a.")
b = define_skill("b", "second", "Do b.")
graph = (skill_graph(a, b).entry(a)
         .route("a", "b", on_tool_return="score_it", guard={"score": {"gt": 5, "lt": 3}})
         .build(check="off"))
not_a_graph = 42
'''


def _graph(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "lens.cli", "graph", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60)


def test_given_the_support_desk_when_its_graph_is_checked_then_ok_and_drawn(
    tmp_path: Path,
) -> None:
    out = _graph("lens._examples.support_desk:make_agent", "--mermaid", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "check-up ok" in out.stdout
    assert "flowchart TD" in out.stdout and "n_billing -->" in out.stdout


def test_given_an_unsatisfiable_guard_when_checked_then_exit_1_names_it(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(BROKEN, encoding="utf-8")
    out = _graph(f"{tmp_path / 'broken.py'}:graph", cwd=tmp_path)
    assert out.returncode == 1
    assert "guard-unsatisfiable" in out.stdout and "score > 5 AND score < 3" in out.stdout


def test_given_a_target_that_is_not_a_graph_when_checked_then_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    (tmp_path / "broken.py").write_text(BROKEN, encoding="utf-8")
    out = _graph(f"{tmp_path / 'broken.py'}:not_a_graph", cwd=tmp_path)
    assert out.returncode == 2
    assert "not a skill graph" in out.stderr and len(out.stderr.strip().splitlines()) == 1
