"""`footprint demo`: the bundled agent, recorded offline into a store, explained."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FOOTPRINT = [sys.executable, "-m", "lens.cli"]
ROOT = Path(__file__).resolve().parents[2]


def _footprint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("FOOTPRINT_STORE", None)
    return subprocess.run([*FOOTPRINT, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_given_an_empty_directory_when_demo_runs_then_it_records_and_explains_the_run(
    tmp_path: Path,
) -> None:
    out = _footprint("demo", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "answer: APPROVED" in text and "[complete," in text
    assert "cursor start → billing by entry (witness 'charged')" in text
    assert "cursor billing → refund by route (guard" in text
    assert "refused read_skill('escalation'): unreachable" in text
    assert "escalated after 2 refusals" in text
    assert "legacy-window-fact" in text
    assert "footprint verify" in text and "footprint sql" in text
    assert (tmp_path / ".footprint").is_dir()


def test_given_the_demo_when_it_explains_the_answer_then_the_planted_fact_is_the_proven_cause(
    tmp_path: Path,
) -> None:
    text = _footprint("demo", cwd=tmp_path).stdout
    why = text[text.index("why (every candidate upstream of the answer"):]
    assert "compared by: the answer contains 'DECLINED'" in why
    assert ("CONFIRMED: removing fact 'legacy-window-fact' changes the answer "
            "(APPROVED → DECLINED, 60 → 30, -$40)") in why
    assert "baseline: the unchanged agent gave the recorded answer in 12/12 live re-runs" in why
    assert "1. [injection] fact 'legacy-window-fact'" in why and "CAUSAL 3/3" in why
    assert "[injection] fact 'refund-policy'" in why and "not-confirmed" in why
    assert "[cursor_move] cursor billing→refund by route" in why


def test_given_a_demo_store_when_the_next_commands_run_then_they_work(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert _footprint("demo", "--store", str(store), cwd=tmp_path).returncode == 0
    verify = _footprint("verify", "last", "--store", str(store), cwd=tmp_path)
    assert verify.returncode == 0 and "valid" in verify.stdout
    sql = _footprint("sql", "SELECT count(*) AS n FROM runs WHERE status = 'complete'",
                     "--store", str(store), "--format", "csv", cwd=tmp_path)
    assert sql.returncode == 0 and sql.stdout.strip().splitlines()[-1] == "1"


def test_given_two_demos_when_runs_are_listed_then_each_has_its_own_run(tmp_path: Path) -> None:
    for _ in range(2):
        assert _footprint("demo", cwd=tmp_path).returncode == 0
    sql = _footprint("sql", "SELECT count(DISTINCT run_id) FROM events", "--format", "csv",
                     cwd=tmp_path)
    assert sql.stdout.strip().splitlines()[-1] == "2"
    assert _footprint("demo", "--clean", cwd=tmp_path).returncode == 0
    sql = _footprint("sql", "SELECT count(DISTINCT run_id) FROM events", "--format", "csv",
                     cwd=tmp_path)
    assert sql.stdout.strip().splitlines()[-1] == "1"


def test_given_a_directory_that_is_not_a_store_when_demo_cleans_it_then_it_refuses(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("keep me", encoding="utf-8")
    out = _footprint("demo", "--clean", "--store", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2
    assert "refuses to delete" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert (tmp_path / "notes.txt").exists()
