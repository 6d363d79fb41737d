"""Compaction merges small sealed files without breaking the chain or a reader.

``footprint compact`` (and a writer, once a folder holds ``compact_at``
small files) merges them; every run verifies as before, the runs list is
the same, a reader that scanned before the merge reads on (no warning, no
duplicate), and a compactor killed between writing the merged file and
deleting the originals leaves a store that reads the same.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from store_scale import run_events, run_id_of

from recorder import ParquetSink, RunQuery, StoreWarning, list_runs, open_store, verify_run
from recorder.write._compact import compact

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
