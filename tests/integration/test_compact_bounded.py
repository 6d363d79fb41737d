"""Compaction writes merged files of at most ``max_runs`` runs each, so what one merge holds
in memory (the merged file's footer: a few hundred bytes per column of each row group)
does not grow with the runs a folder has; a merged file that full is not merged again,
and every run still verifies, stored once."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from store_scale import write_runs

from footprint._errors import ConfigError
from recorder import ParquetSink, RunQuery, list_runs, open_store, verify_run
from recorder.write._compact import RUNS_PER_GROUP, compact

RUNS = 70
MAX_RUNS = 2 * RUNS_PER_GROUP


def _events(root: Path) -> list[Path]:
    return sorted((root / "events").glob("date=*/*.parquet"))


def _runs_in(path: Path) -> int:
    return len(set(pq.read_table(path, columns=["run_id"]).column(0).to_pylist()))


def _verified(root: Path) -> list[tuple[str, int]]:
    with open_store(root) as store:
        table = list_runs(store, RunQuery(limit=1000))
        ids = table["run_id"].to_pylist()
        assert all(verify_run(store, r).valid for r in ids)
        return sorted(zip(ids, table["events"].to_pylist(), strict=True))


def test_given_more_runs_than_a_merged_file_holds_when_compacted_then_each_holds_max_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    write_runs(root, 0, RUNS)
    before = _verified(root)
    done = compact(root, max_runs=MAX_RUNS)
    merged = [c.merged for c in done if c.replaced and c.merged.parent.parent.name == "events"]
    assert len(merged) == -(-RUNS // MAX_RUNS)
    assert all(_runs_in(p) <= MAX_RUNS for p in merged)
    assert sorted(p.name for p in _events(root)) == sorted(p.name for p in merged)
    assert _verified(root) == before


def test_given_full_merged_files_when_more_runs_are_compacted_then_they_stay_as_they_are(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    write_runs(root, 0, RUNS)
    compact(root, max_runs=MAX_RUNS)
    full = {p for p in _events(root) if _runs_in(p) == MAX_RUNS}
    assert len(full) == RUNS // MAX_RUNS
    write_runs(root, RUNS, 5)
    compact(root, max_runs=MAX_RUNS)
    assert full <= set(_events(root))  # never rewritten
    assert len(_verified(root)) == RUNS + 5


def test_given_a_max_runs_below_one_when_compacting_then_it_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_runs=0"):
        compact(tmp_path, max_runs=0)


def test_given_small_files_compaction_leaves_when_segments_seal_then_it_is_not_tried_at_every_seal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a compaction cannot merge (full merged files; here, damaged ones) are not
    counted towards the next: a folder of many would have set one off at every seal."""
    from recorder.write import _parquet_sink

    root = tmp_path / "store"
    folder = root / "events" / "date=2026-01-01"
    folder.mkdir(parents=True)
    for k in range(3):
        (folder / f"20260101T000000-1-0000000{k}-0001.parquet").write_bytes(b"not parquet")
    tried: list[object] = []
    real = _parquet_sink.compact
    monkeypatch.setattr(_parquet_sink, "compact",
                        lambda root, **kw: tried.append(root) or real(root, **kw))
    sink = ParquetSink(root, compact_at=2)
    try:
        for _ in range(3):
            sink._compact_if_many()  # what the file thread runs after each seal
    finally:
        sink.shutdown()
    assert len(tried) == 1
    assert len(list(folder.glob("*.parquet"))) == 3  # left for doctor, as before
