"""Big live segments are read a batch at a time and spilled to Parquet, never held whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from recorder import EventQuery, StoreReader, open_store, verify_run
from recorder.store._discover import read_live
from recorder.store._livespill import LiveSpill
from recorder.write._rows import EVENT_SCHEMA

HERE = Path(__file__).resolve().parent
EVENTS = 3_000
_CHILD = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from store_scale import run_events
from recorder import ParquetSink
sink = ParquetSink({root!r})
for event in run_events(0, {iterations}):
    if event.type != "run.end":
        sink.export([event])
sink.force_flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose only writer was SIGKILLed with its run open: all of it is live."""
    root = tmp_path_factory.mktemp("spill") / "store"
    code = _CHILD.format(tests=str(HERE.parent), root=str(root), iterations=EVENTS // 8)
    done = subprocess.run([sys.executable, "-c", code], timeout=300, check=False)
    assert done.returncode == -signal.SIGKILL
    assert list((root / "live").glob("*.events.arrows"))
    return root


def test_given_a_big_live_stream_when_spilled_then_the_parquet_file_holds_every_row(
    killed: Path,
) -> None:
    (path,) = (killed / "live").glob("*.events.arrows")
    spill = LiveSpill(keep_rows=100)
    kept, spilled = spill.read(path, EVENT_SCHEMA)
    assert kept == [] and spilled is not None
    whole = pa.Table.from_batches(read_live(path), schema=EVENT_SCHEMA)
    assert pa.parquet.read_table(spilled).equals(whole)
    spill.close()
    assert not spilled.exists()


def test_given_a_store_whose_live_rows_are_spilled_then_reads_and_verify_agree(
    killed: Path,
) -> None:
    whole = open_store(killed)
    run = whole.run_ids()[0]
    expected = whole.events(run)
    store = open_store(killed)
    store.spill.keep_rows = 100
    store.refresh()
    assert store.files.live_event_files and not store.files.live_events
    assert store.events(run) == expected
    outline = StoreReader(store).summary(run)
    assert outline.events == len(expected) and outline.status == "incomplete"
    assert StoreReader(store).page(EventQuery(run_id=run), limit=3).num_rows == 3
    assert verify_run(store, run).valid
    assert store.sql("SELECT count(*) FROM events").fetchall() == [(len(expected),)]
    spilled = store.files.live_event_files
    store.close()
    assert not any(os.path.exists(p) for p in spilled)
