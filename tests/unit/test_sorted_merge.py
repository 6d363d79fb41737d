"""The compactor's merge through a spill file (``recorder.write._sorted``) writes what a
merge of the whole tables in memory writes: the same rows in the same order, cut into
the same row groups, however small the chunks it sorts at a time."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.write._compact import RUNS_PER_GROUP, row_groups
from recorder.write._sorted import plan_groups, sources, write_sorted

_ROW = st.tuples(st.sampled_from(["r-a", "r-b", "r-c", "r-d", "r-é", "r-e"]),
                 st.integers(0, 6), st.text(max_size=30))
_FILE = st.tuples(st.lists(_ROW, min_size=0, max_size=40), st.booleans())


def _write(folder: Path, files: list[tuple[list[tuple[str, int, str]], bool]]) -> list[Path]:
    paths = []
    for n, (rows, with_note) in enumerate(files):
        columns = {"run_id": pa.array([r[0] for r in rows], pa.string()),
                   "seq": pa.array([r[1] for r in rows], pa.int64()),
                   "payload": pa.array([r[2] for r in rows], pa.string())}
        if with_note:  # a column only some files have: null in the others' rows
            columns["note"] = pa.array([f"{n}:{i}" for i in range(len(rows))], pa.string())
        paths.append(folder / f"f{n:02d}.parquet")
        pq.write_table(pa.table(columns), paths[-1], row_group_size=7)
    return paths


def _reference(paths: list[Path]) -> pa.Table:
    tables = [pq.read_table(p) for p in paths]
    merged = pa.concat_tables(tables, promote_options="permissive")
    return merged.sort_by([("run_id", "ascending"), ("seq", "ascending")])


@settings(max_examples=40, deadline=None)
@given(files=st.lists(_FILE, min_size=2, max_size=5), chunk=st.integers(1, 4000),
       batch=st.integers(1, 2000), cap=st.integers(3, 50))
def test_given_files_when_merged_through_a_spill_then_rows_and_row_groups_are_a_whole_merges(
        files: list[tuple[list[tuple[str, int, str]], bool]], chunk: int, batch: int,
        cap: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = _write(Path(tmp), files)
        found = sources(paths, ("run_id", "seq"))
        out = Path(tmp) / "merged.parquet"
        rows = write_sorted(found, out, keys=("run_id", "seq"), metadata={b"k": b"v"},
                            options={}, cap=cap, runs_per_group=RUNS_PER_GROUP,
                            spill=Path(tmp) / "spill", chunk_bytes=chunk, batch_bytes=batch)
        expected = _reference(paths)
        merged = pq.ParquetFile(out)
        got = merged.read()
        assert rows == expected.num_rows == got.num_rows
        assert got.equals(expected.cast(got.schema))
        assert merged.schema_arrow.metadata == {b"k": b"v"}
        sizes = [merged.metadata.row_group(i).num_rows
                 for i in range(merged.metadata.num_row_groups)]
        want = [n for start, stop in row_groups(expected, cap)
                for n in _cut(stop - start, cap)]
        assert sizes == want or (expected.num_rows == 0 and sizes in ([], [0]))
        assert not (Path(tmp) / "spill").exists()


def _cut(n: int, cap: int) -> list[int]:
    """A group of ``n`` rows as Parquet writes it with ``row_group_size=cap``."""
    return [min(cap, n - s) for s in range(0, n, cap)]


def test_given_runs_of_many_sizes_when_planned_then_groups_are_whole_runs_within_the_bounds(
) -> None:
    assert plan_groups([3, 3, 3], cap=5, runs_per_group=16, by_run=True) == [3, 3, 3]
    assert plan_groups([1] * 20, cap=100, runs_per_group=16, by_run=True) == [16, 4]
    assert plan_groups([9, 1], cap=5, runs_per_group=16, by_run=True) == [9, 1]
    assert plan_groups([4, 4, 4], cap=5, runs_per_group=16, by_run=False) == [5, 5, 2]
