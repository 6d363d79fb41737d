"""``footprint runs | show | sql | verify`` over a real store, and their error paths."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    LLMEnd,
    LLMStart,
    RunEnd,
    RunStart,
    SkillEscalated,
    SkillRejected,
    ToolEnd,
    ToolStart,
)
from lens.cli import main
from recorder import ParquetSink, Recorder

ROOT = Path(__file__).resolve().parent.parent.parent
T0 = 1_700_000_000_000_000_000


def _run(run_id: str, t0: int, answer: str | None) -> list[Event]:
    ev: list[Event] = [
        RunStart(run_id=run_id, seq=0, ts=t0, user_message="refund order 7?"),
        ContextEvaluated(run_id=run_id, seq=1, ts=t0 + 1, iteration=1, active_count=1,
                         skipped_count=0, evaluated_total=1,
                         cursor_move=CursorMove(by="entry", from_skill=None, to="triage")),
        ContextInjected(run_id=run_id, seq=2, ts=t0 + 2, iteration=1, slot="system-prompt",
                        source="fact", content_hash="h1", content_summary="vip",
                        reason="always", admitted_via="always", injection_id="vip-fact",
                        admitted_by=1),
        LLMStart(run_id=run_id, seq=3, ts=t0 + 3, iteration=1, provider="scripted",
                 model="tiny-1", request_hash="q1", step_id="llm#1"),
        LLMEnd(run_id=run_id, seq=4, ts=t0 + 4, iteration=1, content="let me look",
               response_hash="r1", input_tokens=100, output_tokens=20, step_id="llm#1"),
        ToolStart(run_id=run_id, seq=5, ts=t0 + 5, iteration=1, tool_name="lookup_order",
                  tool_call_id="c1", args={"order": 7}),
        SkillRejected(run_id=run_id, seq=6, ts=t0 + 6, iteration=1, requested_id="billing",
                      reason="unreachable", allowed=("triage", "refunds"),
                      current_skill_id="triage"),
        SkillEscalated(run_id=run_id, seq=7, ts=t0 + 7, iteration=1, after_refusals=1,
                       refusals=1, from_provider="scripted", from_model="tiny-1",
                       to_provider="scripted", to_model="big-2"),
        ToolEnd(run_id=run_id, seq=8, ts=t0 + 8, iteration=1, tool_call_id="c1",
                tool_name="lookup_order", result="order 7: 47 days old"),
    ]
    if answer is not None:
        ev.append(RunEnd(run_id=run_id, seq=9, ts=t0 + 9, final_content=answer,
                         total_input_tokens=100, total_output_tokens=20, iteration_count=1))
    return ev


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    with Recorder([ParquetSink(root)]) as rec:
        for e in _run("0190aaaa-first", T0, "APPROVED") + _run("0190bbbb-second", T0 + 100, None):
            rec.emit(e)
    return root


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_given_a_store_when_listing_runs_then_status_tokens_and_answer_show(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(capsys, "runs", "--store", str(store))
    lines = out.splitlines()
    assert code == 0
    assert "0190aaaa-first" in lines[2] and "complete" in lines[2] and "APPROVED" in lines[2]
    assert "0190bbbb-second" in lines[3] and "incomplete" in lines[3]
    assert " 120 " in lines[2]


def test_given_a_prefix_when_showing_a_run_then_the_timeline_reads_in_order(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(capsys, "show", "0190a", "--store", str(store))
    assert code == 0
    order = ["∅ → triage (by entry)", "[system-prompt] fact 'vip-fact' via always",
             "scripted/tiny-1", "lookup_order(", "REJECTED  'billing' from triage: unreachable",
             "ESCALATED", "47 days old", "answer: APPROVED"]
    positions = [out.index(s) for s in order]
    assert positions == sorted(positions)
    assert "── iteration 1" in out and "complete" in out.splitlines()[0]


def test_given_sql_formats_when_querying_then_csv_and_json_carry_the_same_rows(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = "SELECT run_id, requested_id, allowed FROM rejections ORDER BY run_id"
    _, as_csv, _ = _cli(capsys, "sql", q, "--format", "csv", "--store", str(store))
    _, as_json, _ = _cli(capsys, "sql", q, "--format", "json", "--store", str(store))
    _, as_table, _ = _cli(capsys, "sql", q, "--store", str(store))
    rows = list(csv.reader(io.StringIO(as_csv)))
    assert rows[0] == ["run_id", "requested_id", "allowed"]
    assert [r[:2] for r in rows[1:]] == [["0190aaaa-first", "billing"],
                                         ["0190bbbb-second", "billing"]]
    assert [(r["run_id"], r["requested_id"]) for r in json.loads(as_json)] == [
        tuple(r[:2]) for r in rows[1:]]
    assert "(2 rows)" in as_table


def test_given_last_when_verifying_then_exit_0_and_valid(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(capsys, "verify", "last", "--store", str(store))
    assert (code, out.strip()) == (0, "0190bbbb-second: valid, 9 records")


def test_given_a_tampered_store_when_verifying_then_exit_1_naming_the_seq(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (path,) = (store / "events").rglob("*.parquet")
    table = pq.read_table(path)
    rows = table.to_pylist()
    target = next(r for r in rows if r["run_id"] == "0190aaaa-first" and r["seq"] == 5)
    target["payload"] = str(target["payload"]).replace('"order":7', '"order":8')
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    code, out, _ = _cli(capsys, "verify", "0190aaaa-first", "--store", str(store))
    assert code == 1
    assert "broken at seq 5: hash mismatch" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["show", "0190", "--store", "{s}"], "matches 2 runs"),
        (["show", "0190aaaa-firts", "--store", "{s}"], "did you mean '0190aaaa-first'"),
        (["sql", "SELECT * FROM nowhere", "--store", "{s}"], "query failed"),
        (["verify", "last", "--store", "{s}/missing"], "no footprint store"),
        (["sql", "SELECT 1", "--format", "xml", "--store", "{s}"], "invalid choice"),
        (["explode"], "invalid choice"),
    ],
)
def test_given_bad_input_when_run_then_one_line_on_stderr_and_exit_2(
    store: Path, argv: list[str], needle: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lens.cli", *[a.replace("{s}", str(store)) for a in argv]],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert needle in proc.stderr


def test_given_help_when_run_then_no_heavy_module_is_imported() -> None:
    probe = ("import sys, contextlib, io\nfrom lens.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'pyarrow', 'duckdb', 'recorder', 'textual', 'opentelemetry'}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_given_footprint_store_env_when_no_flag_then_it_is_used(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOOTPRINT_STORE", str(store))
    code, out, _ = _cli(capsys, "sql", "SELECT count(*) AS n FROM runs", "--format", "csv")
    assert (code, out) == (0, "n\n2\n")
