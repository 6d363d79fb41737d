"""Compaction merges small sealed files without breaking the chain or a reader.

``footprint compact`` (and a writer, once a folder holds ``compact_at``
small files) merges them; every run verifies as before, the runs list is
the same, a reader that scanned before the merge reads on (no warning, no
duplicate), and a compactor killed between writing the merged file and
deleting the originals leaves a store that reads the same; the next
compaction (and ``doctor --quarantine``) finishes it, never merging a row
twice. Stray files are neither merged nor deleted, dead writers' temp files
are removed, a merged file's row groups hold a few whole runs, and
``doctor`` names interrupted compactions and events stored twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_scale import run_events, run_id_of

from recorder import ParquetSink, RunQuery, StoreWarning, list_runs, open_store, verify_run
from recorder.write._compact import RUNS_PER_GROUP, compact

ROOT = Path(__file__).resolve().parent.parent.parent
RUNS = 40


def _write(root: Path, runs: int, *, compact_at: int | None) -> None:
    sink = ParquetSink(root, seal_rows=1, compact_at=compact_at)  # a segment per run
    try:
        for n in range(runs):
            sink.export(list(run_events(n, 2)))
    finally:
        sink.shutdown()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compact") / "store"
    _write(root, RUNS, compact_at=None)
    return root


@pytest.fixture
def store_dir(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(pristine, root)
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/**/*.parquet") if "summaries" not in p.parts)


def _listing(root: Path) -> list[tuple[object, ...]]:
    with open_store(root) as store:
        table = list_runs(store, RunQuery(limit=1000))
        assert all(verify_run(store, r).valid for r in table["run_id"].to_pylist())
        return sorted(zip(*(table[c].to_pylist() for c in ("run_id", "status", "events",
                                                          "answer")), strict=True))


def test_given_many_small_files_when_footprint_compact_then_few_files_and_every_run_verifies(
    store_dir: Path,
) -> None:
    before, files = _listing(store_dir), len(_files(store_dir))
    assert files >= 2 * RUNS  # an events and a chain file per segment
    done = subprocess.run([sys.executable, "-m", "lens.cli", "compact", "--store",
                           str(store_dir)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, check=False)
    assert done.returncode == 0 and "merged" in done.stdout, done.stdout + done.stderr
    assert len(_files(store_dir)) <= 3  # events, chain (and stats when there are any)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert _listing(store_dir) == before
    doctor = subprocess.run([sys.executable, "-m", "lens.cli", "doctor", "--store",
                             str(store_dir)], capture_output=True, text=True, timeout=120,
                            cwd=ROOT, check=False)
    assert doctor.returncode == 0, doctor.stdout


def test_given_a_reader_that_scanned_before_when_compacted_then_it_reads_on_unharmed(
    store_dir: Path,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        with open_store(store_dir) as store:  # its scan names the files about to go
            assert store.rows("SELECT count(*) FROM events")[0][0] > 0
            expected = store.rows("SELECT count(*) FROM events")
            assert compact(store_dir)
            assert store.rows("SELECT count(*) FROM events") == expected  # no duplicate
            assert verify_run(store, run_id_of(5)).valid


def test_given_compaction_in_another_process_when_verifying_meanwhile_then_never_a_break(
    store_dir: Path,
) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "compact", "--store",
                             str(store_dir)], stdout=subprocess.DEVNULL, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    checks = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        while proc.poll() is None or checks < 3:
            with open_store(store_dir) as store:
                result = verify_run(store, run_id_of(checks % RUNS))
                assert result.valid, result.summary()
            checks += 1
            time.sleep(0.01)
    assert proc.wait(timeout=120) == 0


def test_given_a_compactor_killed_before_deleting_when_read_then_the_store_reads_the_same(
    store_dir: Path, tmp_path: Path,
) -> None:
    before = _listing(store_dir)
    originals = tmp_path / "originals"
    shutil.copytree(store_dir, originals)
    assert compact(store_dir)
    for path in _files(originals):  # as if killed after the rename, before the deletions
        target = store_dir / path.relative_to(originals)
        if not target.exists():
            shutil.copy2(path, target)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert _listing(store_dir) == before


def test_given_a_writer_with_compact_at_when_it_seals_many_segments_then_it_compacts(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _write(root, 30, compact_at=8)
    assert len(list((root / "chain").glob("*.parquet"))) < 8
    assert len(_listing(root)) == 30


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, check=False)


def _events_files(root: Path) -> list[Path]:
    return sorted((root / "events").glob("date=*/*.parquet"))


def _run_ids(root: Path) -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        with open_store(root) as store:
            return {r for (r,) in store.rows("SELECT DISTINCT run_id FROM events")}


def test_given_a_stray_events_file_when_compacted_then_it_is_neither_merged_nor_deleted(
    store_dir: Path,
) -> None:
    source = _events_files(store_dir)[0]
    table = pq.read_table(source, partitioning=None).replace_schema_metadata(None)
    phantom = table.set_column(table.schema.get_field_index("run_id"), "run_id",
                               pa.array(["phantom"] * table.num_rows))
    stray = source.parent / "export.parquet"  # another tool's file, unmarked
    pq.write_table(phantom, stray)
    before = _run_ids(store_dir)
    assert "phantom" not in before  # readers skip it
    done = _cli("compact", "--store", str(store_dir))
    assert done.returncode == 0 and "merged" in done.stdout, done.stdout + done.stderr
    assert stray.exists() and _run_ids(store_dir) == before


def test_given_a_stray_file_with_a_subset_of_the_columns_when_compacted_then_the_rest_merges(
    store_dir: Path,
) -> None:
    stray = store_dir / "chain" / "notes.parquet"
    pq.write_table(pa.table({"run_id": ["x"], "note": ["mine"]}), stray)
    before = _listing_quietly(store_dir)
    done = _cli("compact", "--store", str(store_dir))
    assert done.returncode == 0 and "merged" in done.stdout, done.stdout + done.stderr
    assert stray.exists() and len(list((store_dir / "chain").glob("*.parquet"))) == 2
    assert _listing_quietly(store_dir) == before


def _listing_quietly(root: Path) -> list[tuple[object, ...]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        return _listing(root)


def test_given_temp_files_of_gone_and_live_writers_when_a_writer_starts_then_only_the_gone_go(
    store_dir: Path,
) -> None:
    live = ParquetSink(store_dir, compact_at=None, adopt=False)  # no clean-up of its own
    try:
        part = _events_files(store_dir)[0].parent
        gone = part / ".20260101T000000-1-0badbeef-00001.parquet.tmp"
        merged = store_dir / "chain" / ".20260101T000000-2-0badbeef-c0000.parquet.tmp"
        mine = part / f".{live.writer_id}-00009.parquet.tmp"
        for path in (gone, merged, mine):
            path.write_bytes(b"PAR1 half written")
            os.utime(path, (time.time() - 60, time.time() - 60))
        fresh = part / ".20260101T000000-3-0badbeef-00001.parquet.tmp"
        fresh.write_bytes(b"PAR1 just begun")  # a dead writer's, but too young to be sure
        doctor = _cli("doctor", "--store", str(store_dir))
        assert doctor.returncode == 1 and f"leftover temp file {gone}" in doctor.stdout
        ParquetSink(store_dir, compact_at=None).shutdown()  # the next writer cleans up
        assert not gone.exists() and not merged.exists()
        assert mine.exists() and fresh.exists()
    finally:
        live.shutdown()


def test_given_a_merged_file_when_its_row_groups_are_read_then_each_holds_a_few_whole_runs(
    store_dir: Path,
) -> None:
    compact(store_dir)
    for path in [*_events_files(store_dir), *(store_dir / "chain").glob("*.parquet")]:
        file = pq.ParquetFile(path)
        groups = [set(file.read_row_group(g, columns=["run_id"])["run_id"].to_pylist())
                  for g in range(file.num_row_groups)]
        assert sum(map(len, groups)) == RUNS  # no run in two row groups
        assert max(map(len, groups)) <= RUNS_PER_GROUP < RUNS


def test_given_a_flipped_byte_in_a_merged_events_file_when_read_by_row_group_then_few_runs_lost(
    store_dir: Path,
) -> None:
    compact(store_dir)
    (path,) = _events_files(store_dir)
    pristine = pq.ParquetFile(path)
    rows = [pristine.read_row_group(g) for g in range(pristine.num_row_groups)]
    chunk = pristine.metadata.row_group(0).column(pristine.schema_arrow.get_field_index(
        "payload"))
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset + chunk.total_compressed_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    damaged, lost = pq.ParquetFile(path), set()
    for g, expected in enumerate(rows):
        try:
            same = damaged.read_row_group(g).equals(expected)
        except (OSError, pa.ArrowException):
            same = False
        lost |= set() if same else set(expected["run_id"].to_pylist())
    assert 0 < len(lost) <= RUNS_PER_GROUP


def test_given_an_interrupted_compaction_when_doctor_runs_then_it_names_it_and_finishes_it(
    store_dir: Path, tmp_path: Path,
) -> None:
    originals = tmp_path / "originals"
    shutil.copytree(store_dir, originals)
    compact(store_dir)
    left = _files(originals)[:3]  # as if killed after the rename, three deletions short
    for path in left:
        shutil.copy2(path, store_dir / path.relative_to(originals))
    doctor = _cli("doctor", "--store", str(store_dir))
    assert doctor.returncode == 1 and "interrupted compaction" in doctor.stdout, doctor.stdout
    repair = _cli("doctor", "--quarantine", "--store", str(store_dir))
    assert repair.returncode == 0, repair.stdout
    assert not any((store_dir / p.relative_to(originals)).exists() for p in left)
    assert _cli("doctor", "--store", str(store_dir)).returncode == 0


def test_given_events_stored_twice_when_doctor_runs_then_it_names_the_run(
    store_dir: Path,
) -> None:
    source = _events_files(store_dir)[0]
    shutil.copy2(source, source.with_name("20260101T000000-1-0badbeef-00001.parquet"))
    (run,) = set(pq.read_table(source, columns=["run_id"])["run_id"].to_pylist())
    doctor = _cli("doctor", "--store", str(store_dir))
    assert doctor.returncode == 1, doctor.stdout
    assert f"duplicates: run {run} has" in doctor.stdout, doctor.stdout


def test_given_an_interrupted_compaction_when_footprint_compact_runs_then_no_event_twice(
    store_dir: Path, tmp_path: Path,
) -> None:
    before = _listing(store_dir)
    originals = tmp_path / "originals"
    shutil.copytree(store_dir, originals)
    compact(store_dir)
    for path in _files(originals)[::2]:  # killed after the rename, half the deletions done
        shutil.copy2(path, store_dir / path.relative_to(originals))
    done = _cli("compact", "--store", str(store_dir))
    assert done.returncode == 0 and "finished an interrupted compaction" in done.stdout, (
        done.stdout + done.stderr)
    with open_store(store_dir) as store:
        assert store.rows("SELECT count(*) - count(DISTINCT (run_id, seq)) FROM events") == [
            (0,)]
    assert _listing(store_dir) == before


_WRITER = """
import sys
sys.path.insert(0, sys.argv[3])
from store_scale import run_events
from recorder import ParquetSink
sink = ParquetSink(sys.argv[1], seal_rows=1, compact_at=2)  # a segment per run, compacting
first = int(sys.argv[2])
try:
    for n in range(first, first + 15):
        sink.export(list(run_events(n, 2)))
finally:
    sink.shutdown()
"""


def test_given_several_writer_processes_compacting_one_store_at_once_when_read_then_every_run_once_and_verified(  # noqa: E501
    tmp_path: Path,
) -> None:
    # what `footprint receive --workers N` does: N store writers, each compacting the store
    # as its small files pile up; one compactor at a time (live/compact.lock)
    root = tmp_path / "store"
    tests = str(ROOT / "tests")
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(root), str(first), tests],
                              cwd=ROOT) for first in (0, 100, 200, 300)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0, 0]
    listing = _listing(root)  # every run verifies
    assert sorted(r for r, *_ in listing) == sorted(
        run_id_of(n) for first in (0, 100, 200, 300) for n in range(first, first + 15))
    with open_store(root) as store:
        (twice,) = store.rows("SELECT count(*) - count(DISTINCT (run_id, seq)) FROM events")[0]
    assert twice == 0
    assert len(_events_files(root)) < 4 * 15  # the writers did compact
