"""A blob stored twice (two writers saw the same long text), one copy edited on disk: no
reader ever shows the edited copy, whichever file the scan meets first, and `doctor` names
the file that holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from footprint.events import Event, RunEnd, RunStart, ToolEnd
from lens.explain._read import _decode as why_decode
from lens.tui._reader import RunReader, StoreGate
from recorder import ParquetSink, Recorder, RunQuery, list_runs, open_store

ROOT = Path(__file__).resolve().parent.parent.parent
T0 = 1_700_000_000_000_000_000
SHARED = "the same long policy text, stored by every writer that sees it. " * 8


def _run(run_id: str) -> list[Event]:
    return [RunStart(run_id=run_id, seq=0, ts=T0, user_message="q"),
            ToolEnd(run_id=run_id, seq=1, ts=T0 + 1, tool_call_id="c1", tool_name="t",
                    result=SHARED),
            RunEnd(run_id=run_id, seq=2, ts=T0 + 2, final_content=SHARED)]


@pytest.fixture(params=[0, 1], ids=["edited-first", "edited-last"])
def edited(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """A store of two runs, each writer's blob file holding SHARED; the copy in the first
    (or last) file by name edited in place."""
    root = tmp_path / "store"
    for run_id in ("run-a", "run-b"):
        with Recorder([ParquetSink(root)]) as rec:
            for event in _run(run_id):
                rec.emit(event)
    copies = sorted((root / "blobs").glob("*.parquet"))
    assert len(copies) == 2
    target = copies[request.param]
    rows = pq.read_table(target).to_pylist()
    rows[0]["text"] = rows[0]["text"].replace("same", "SAME")
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(target)), target)
    return root, target


def test_given_an_edited_copy_of_a_blob_when_read_ten_times_then_never_shown(
    edited: tuple[Path, Path],
) -> None:
    root, _ = edited
    shown: set[str] = set()
    for _ in range(10):  # the scan's file order decided which copy the views read
        with open_store(root) as store:
            shown.update(t for (t,) in store.rows("SELECT text FROM blobs"))
            shown.update(t for (t,) in store.rows("SELECT answer FROM runs"))
            shown.update(e.result for e in store.events("run-a") if isinstance(e, ToolEnd))
            shown.update(list_runs(store, RunQuery(answer="same long"))
                         .column("answer").to_pylist())
            shown.update(e.result for e in why_decode(store, "run_id = ?", ["run-a"])
                         if isinstance(e, ToolEnd))  # the rows `why` reads
            reader = RunReader(StoreGate(store), "run-b")  # the lens's pages
            shown.update(e.result for e in reader.events_where("type = 'tool.end'")
                         if isinstance(e, ToolEnd))
    assert shown == {SHARED}


def test_given_an_edited_copy_of_a_blob_when_doctor_runs_then_it_names_the_file(
    edited: tuple[Path, Path],
) -> None:
    root, target = edited
    for flags in ([], ["--quarantine"]):
        done = subprocess.run(
            [sys.executable, "-m", "lens.cli", "doctor", "--store", str(root), *flags],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT, timeout=60)
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"edited   {target}: 1 blob text(s) do not match their hash" in done.stdout
    assert target.exists()  # the file's other blobs still read: never moved
