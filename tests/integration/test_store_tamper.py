"""The audit chain names the first broken record; damaged files are skipped, not fatal."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import run_streams

from footprint.events import TERMINAL_TYPES, Event, RunEnd, RunStart, ToolEnd
from recorder import (
    DROP,
    ParquetSink,
    Recorder,
    StoreWarning,
    open_store,
    row_check,
    verify_run,
)

N = 40


@pytest.fixture(autouse=True, params=[None, 1, 5], ids=["window-default", "window-1",
                                                        "window-5"])
def verify_window(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every verdict below holds whatever window the walk reads the run in (a head, a
    block or a tampered record falling on a window's edge)."""
    import recorder.store._verify

    if request.param is not None:
        monkeypatch.setattr(recorder.store._verify, "WINDOW", request.param)


def _events(run_id: str = "run-t") -> list[Event]:
    t = 1_700_000_000_000_000_000
    body: list[Event] = [RunStart(run_id=run_id, seq=0, ts=t, user_message="q")]
    body += [ToolEnd(run_id=run_id, seq=i, ts=t + i, tool_call_id=f"c{i}", tool_name="t",
                     result=f"r{i}" * (1 + 200 * (i == 7))) for i in range(1, N - 1)]
    return [*body, RunEnd(run_id=run_id, seq=N - 1, ts=t + N, final_content="a")]


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    with Recorder([ParquetSink(root)]) as rec:
        for e in _events():
            rec.emit(e)
    return root


def _file(root: Path) -> Path:
    (path,) = (root / "events").rglob("*.parquet")
    return path


def _rewrite(root: Path, change: Callable[[list[dict[str, object]]], object]) -> None:
    path = _file(root)
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def _flip_payload_byte(rows: list[dict[str, object]], seq: int, at: int) -> None:
    row = next(r for r in rows if r["seq"] == seq)
    text = str(row["payload"]).encode()
    at %= len(text)
    row["payload"] = (text[:at] + bytes([text[at] ^ 0x01]) + text[at + 1:]).decode()


def test_given_an_untouched_run_when_verified_then_valid(store_dir: Path) -> None:
    result = verify_run(open_store(store_dir), "run-t")
    assert result.valid and result.records == N
    assert result.summary() == f"valid, {N} records"


@given(seq=st.integers(0, N - 1), at=st.integers(0, 10_000))
@settings(max_examples=30)
def test_given_one_flipped_payload_byte_when_verified_then_that_seq_is_named(
    tmp_path_factory: pytest.TempPathFactory, seq: int, at: int
) -> None:
    root = tmp_path_factory.mktemp("t")
    with Recorder([ParquetSink(root)]) as rec:
        for e in _events():
            rec.emit(e)
    _rewrite(root, lambda rows: _flip_payload_byte(rows, seq, at))
    result = verify_run(open_store(root), "run-t")
    assert (result.valid, result.broken_seq, result.reason) == (False, seq, "hash mismatch")


def test_given_a_record_edited_and_rehashed_when_verified_then_the_next_seq_breaks(
    store_dir: Path,
) -> None:
    def edit(rows: list[dict[str, object]]) -> None:
        row = rows[5]
        row["payload"] = str(row["payload"]).replace('"t"', '"x"')
        row["row_check"] = row_check(str(row["payload"]))

    _rewrite(store_dir, edit)
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.broken_seq, result.reason) == (6, "chain broken")


def test_given_a_deleted_record_when_verified_then_its_seq_is_missing(store_dir: Path) -> None:
    _rewrite(store_dir, lambda rows: rows.pop(12))
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.broken_seq, result.reason) == (12, "missing record")


def test_given_a_dropped_head_when_verified_then_seq_0_is_missing(store_dir: Path) -> None:
    _rewrite(store_dir, lambda rows: rows.pop(0))
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.broken_seq, result.reason) == (0, "missing record")


def test_given_a_tampered_blob_when_verified_then_the_seq_using_it_is_named(
    store_dir: Path,
) -> None:
    (path,) = (store_dir / "blobs").glob("*.parquet")
    rows = pq.read_table(path).to_pylist()
    rows[0]["text"] = "r7" + rows[0]["text"][2:].replace("r7", "r8", 1)
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.broken_seq, result.reason) == (7, "blob mismatch")


def test_given_recorder_overflow_gaps_when_verified_then_valid_with_skipped_seqs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "s"
    with Recorder([ParquetSink(root)], [lambda e: e if e.seq % 4 else DROP]) as rec:
        for e in _events():
            rec.emit(e)
    result = verify_run(open_store(root), "run-t")
    assert result.valid and result.skipped == N // 4
    assert open_store(root).rows("SELECT filtered FROM runs")[0][0] == N // 4


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_given_a_damaged_file_when_the_store_opens_then_one_warning_and_the_rest_queryable(
    store_dir: Path, damage: str
) -> None:
    good = _file(store_dir)
    bad = good.with_name("zz-damaged.parquet")
    shutil.copy(good, bad)
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x00garbage" * 99)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = open_store(store_dir)
    named = [w for w in caught if issubclass(w.category, StoreWarning)]
    assert len(named) == 1 and "zz-damaged.parquet" in str(named[0].message)
    assert store.rows("SELECT count(*) FROM events")[0][0] == N
    assert verify_run(store, "run-t").valid


def test_given_the_tail_of_a_sealed_run_cut_off_when_verified_then_the_first_cut_seq_is_missing(
    store_dir: Path,
) -> None:
    _rewrite(store_dir, lambda rows: rows.__delitem__(slice(N - 3, None)))
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.valid, result.broken_seq, result.reason) == (False, N - 3, "missing record")
    assert f"up to seq {N - 1}" in result.detail


def _block_start(root: Path, seq: int) -> int:
    """The first seq covered by the head stored at or after ``seq`` (heads come per batch)."""
    (path,) = (root / "chain").glob("*.parquet")
    before = [r["last_seq"] for r in pq.read_table(path).to_pylist() if r["last_seq"] < seq]
    return max(before, default=-1) + 1


def test_given_a_forged_chain_head_when_verified_then_its_block_is_a_hash_mismatch(
    store_dir: Path,
) -> None:
    (path,) = (store_dir / "chain").glob("*.parquet")
    rows = pq.read_table(path).to_pylist()
    last = max(rows, key=lambda r: r["last_seq"])
    last["head"] = bytes(32)
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    result = verify_run(open_store(store_dir), "run-t")
    start = _block_start(store_dir, N - 1)
    assert (result.valid, result.broken_seq, result.reason) == (False, start, "hash mismatch")
    assert f"seq {start}..{N - 1}" in result.detail


@pytest.mark.parametrize("column, value", [("type", "tool.start"), ("ts", 5), ("turn", 3)])
def test_given_an_edited_envelope_value_when_verified_then_the_head_over_it_breaks(
    store_dir: Path, column: str, value: object,
) -> None:
    def edit(rows: list[dict[str, object]]) -> None:
        next(r for r in rows if r["seq"] == 9)[column] = value

    _rewrite(store_dir, edit)
    result = verify_run(open_store(store_dir), "run-t")
    start = _block_start(store_dir, 9)
    assert (result.valid, result.broken_seq, result.reason) == (False, start, "hash mismatch")
    assert "an envelope value" in result.detail


def test_given_a_run_sealed_across_many_segments_when_verified_then_every_head_checks_out(
    tmp_path: Path,
) -> None:
    root = tmp_path / "s"
    with Recorder([ParquetSink(root, seal_rows=7)], batch_size=5) as rec:
        for e in _events():
            rec.emit(e)
            rec.flush()
    store = open_store(root)
    heads = store.rows("SELECT count(*), max(last_seq) FROM _chain_all WHERE run_id = 'run-t'")
    assert heads[0][0] >= N // 7 and heads[0][1] == N - 1
    assert verify_run(store, "run-t").valid


def test_given_a_run_still_in_flight_when_verified_then_its_live_heads_check_out(
    tmp_path: Path,
) -> None:
    root = tmp_path / "s"
    rec = Recorder([ParquetSink(root)], batch_size=8)
    try:
        for e in _events()[:-1]:  # no run.end: the segment stays live
            rec.emit(e)
            if e.seq % 9 == 0:
                rec.flush()
        rec.flush()
        assert not list((root / "chain").glob("*.parquet"))
        store = open_store(root)
        heads = store.rows("SELECT count(*), max(last_seq) FROM _chain_all")
        assert heads[0][0] >= 4 and heads[0][1] == N - 2
        assert verify_run(store, "run-t").valid
    finally:
        rec.close()


def test_given_the_chain_files_deleted_when_verified_then_the_ended_run_is_unheaded(
    store_dir: Path,
) -> None:
    for path in (store_dir / "chain").glob("*.parquet"):
        path.unlink()
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.valid, result.broken_seq, result.reason) == (False, 0, "chain broken")


@given(stream=run_streams(min_size=1, max_size=15))
@settings(max_examples=25, deadline=None)
def test_given_any_recorded_run_when_verified_then_valid(
    tmp_path_factory: pytest.TempPathFactory, stream: list[Event],
) -> None:
    root = tmp_path_factory.mktemp("any")
    ends = [i for i, e in enumerate(stream) if e.type in TERMINAL_TYPES]
    stream = stream[:ends[0] + 1] if ends else stream  # an agent emits nothing after its end
    with Recorder([ParquetSink(root, blob_min_chars=40)], batch_size=4) as rec:
        for e in stream:
            rec.emit(e)
    result = verify_run(open_store(root), stream[0].run_id)
    assert result.valid, result.summary()


@pytest.mark.parametrize("column, value", [("tool_name", "rm"), ("admitted_by", 3)])
def test_given_an_edited_derived_column_when_verified_then_its_row_is_named(
    store_dir: Path, column: str, value: object,
) -> None:
    def edit(rows: list[dict[str, object]]) -> None:
        next(r for r in rows if r["seq"] == 5)[column] = value

    _rewrite(store_dir, edit)
    result = verify_run(open_store(store_dir), "run-t")
    assert (result.valid, result.broken_seq, result.reason) == (False, 5, "hash mismatch")
    assert f"column {column}" in result.detail
