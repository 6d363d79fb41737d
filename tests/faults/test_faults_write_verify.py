"""``verify`` under three faults: a store sealing while it is read, an event forged after the
run's end, and an edited blob whose text another writer stored too."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from footprint.events import Event, RunEnd, RunStart, ToolEnd
from recorder import ParquetSink, Recorder, open_store, row_check, verify_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CHILD = HERE / "faults_write_child.py"
T0 = 1_700_000_000_000_000_000
SHARED = "the same long policy text, stored by every writer that sees it. " * 8


def _run(run_id: str, n: int = 20) -> list[Event]:
    body: list[Event] = [RunStart(run_id=run_id, seq=0, ts=T0, user_message="q")]
    body += [ToolEnd(run_id=run_id, seq=i, ts=T0 + i, tool_call_id=f"c{i}", tool_name="t",
                     result=SHARED if i == 5 else f"r{i}") for i in range(1, n - 1)]
    return [*body, RunEnd(run_id=run_id, seq=n - 1, ts=T0 + n, final_content="done")]


def _record(root: Path, events: list[Event]) -> None:
    with Recorder([ParquetSink(root)]) as rec:
        for e in events:
            rec.emit(e)


@pytest.mark.slow
def test_given_writers_sealing_while_verified_when_runs_ended_then_never_a_false_break(
    tmp_path: Path,
) -> None:
    """Three real writer processes seal a segment every ~100 rows while this process opens
    the store and verifies every recently ended run, again and again: an untouched run
    must always verify (a segment sealed between reading its rows and its heads used to
    read as "chain broken", about 1 check in 100 here)."""
    root = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, str(CHILD), str(root), "sealing", "100000"],
                              stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for _ in range(3)]
    ended: list[str] = []

    def follow(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        ended.extend(line.split()[1] for line in proc.stdout if line.startswith("ended"))

    for proc in procs:
        threading.Thread(target=follow, args=(proc,), daemon=True).start()
    verdicts: list[tuple[str, str, int]] = []
    try:
        started = time.monotonic()
        while len(ended) < 5 and time.monotonic() < started + 60:
            time.sleep(0.01)
        soon, late = time.monotonic() + 10, time.monotonic() + 90
        while len(verdicts) < 600 and time.monotonic() < late and (
                time.monotonic() < soon or len(verdicts) < 24):  # a loaded box: 2 rounds
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                store = open_store(root)
            recent = store.rows("SELECT run_id FROM runs WHERE status = 'complete' "
                                "ORDER BY start_ns DESC LIMIT 12")
            for (run_id,) in recent:
                result = verify_run(store, run_id)
                verdicts.append((run_id, result.summary(), result.records))
            store.close()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert len(verdicts) >= 20
    assert [v for v in verdicts if v[1] != "valid, 40 records" or v[2] != 40] == []


def test_given_an_event_forged_after_run_end_when_verified_then_chain_broken(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _record(root, _run("run-f"))
    (sealed,) = (root / "events").rglob("*.parquet")
    table = pq.read_table(sealed)
    last = table.to_pylist()[-1]
    payload = '{"duration_ms":0.0,"error":false,"result":"refund approved","status":null,' \
              '"step_note":null,"tool_call_id":"c99","tool_name":"t"}'
    forged = {**last, "seq": last["seq"] + 1, "type": "tool.end", "tool_name": "t",
              "tool_call_id": "c99", "payload": payload,
              "prev_check": last["row_check"], "row_check": row_check(payload)}
    forged.pop("date", None)
    schema = table.schema.remove(table.schema.get_field_index("date")) \
        if "date" in table.schema.names else table.schema
    marked = schema.with_metadata({b"footprint.store": b"events"})  # anyone can mark a file
    pq.write_table(pa.Table.from_pylist([forged], schema=marked),
                   sealed.with_name("forged.parquet"))
    result = verify_run(open_store(root), "run-f")
    assert not result.valid
    assert (result.broken_seq, result.reason) == (20, "chain broken")
    assert "after the run ended" in result.detail


def test_given_an_edited_blob_another_writer_also_stored_when_verified_then_always_a_mismatch(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _record(root, _run("run-a"))
    _record(root, _run("run-b"))  # a second writer stores its own copy of SHARED
    copies = sorted((root / "blobs").glob("*.parquet"))
    assert len(copies) == 2
    rows = pq.read_table(copies[0]).to_pylist()
    rows[0]["text"] = rows[0]["text"].replace("same", "SAME")
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(copies[0])), copies[0])
    verdicts = set()
    for _ in range(12):  # the views pick either copy; the verdict must not depend on it
        store = open_store(root)
        for run_id in ("run-a", "run-b"):
            result = verify_run(store, run_id)
            verdicts.add((result.valid, result.broken_seq, result.reason))
        store.close()
    assert verdicts == {(False, 5, "blob mismatch")}
