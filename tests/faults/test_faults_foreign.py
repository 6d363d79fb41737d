"""Foreign and bit-rotted files: the store knows its own files by their marker.

A stray Parquet file holding just the five columns a reader needs (an
export, another tool's file), under any name, is left out with one warning
naming it on every read path (the CLI, ``Store.sql`` and ``footprint sql``,
the runs list the lens shows), and ``footprint doctor`` names it; a sealed
file written before files were marked still reads. A file damaged inside
its data is skipped by ``Store.sql`` and ``footprint sql`` as by every other
read path. Real CLI processes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_scale import one_run_per_segment, run_id_of

from recorder import RunQuery, StoreWarning, list_runs, open_store, verify_run

RUNS = 3
PHANTOM = "0190ffff-0000-7000-8000-000000000000"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_run_per_segment(tmp_path_factory.mktemp("foreign"), RUNS, 2)


@pytest.fixture
def store_dir(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(pristine, root)
    return root


def _events_files(root: Path) -> list[Path]:
    return sorted((root / "events").glob("*/*.parquet"))


def _stray(root: Path, name: str) -> Path:
    """Five columns, right types, a run of its own: what an export or another tool leaves."""
    path = root / "events" / "date=2026-01-01" / name
    pq.write_table(pa.table({
        "run_id": [PHANTOM] * 2, "seq": pa.array([0, 1], pa.int64()),
        "ts": pa.array([1, 2], pa.int64()), "type": ["run.start", "run.end"],
        "payload": ['{"user_message": "x"}', '{"final_content": "phantom"}'],
    }), path)
    return path


STRAYS = {"export": "export.parquet", "segment-name": "20260101T000000-4242-deadbeef-00001.parquet"}


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args, "--store", str(root)],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("name", sorted(STRAYS))
def test_given_a_stray_parquet_with_the_five_columns_when_read_then_skipped_and_named(
    store_dir: Path, name: str
) -> None:
    bad = _stray(store_dir, STRAYS[name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with open_store(store_dir) as store:
            listed = list_runs(store, RunQuery(limit=10))["run_id"].to_pylist()
            assert sorted(listed) == [run_id_of(n) for n in range(RUNS)]  # no phantom run
            assert store.sql("SELECT count(DISTINCT run_id) FROM events").fetchall() == [(3,)]
            assert all(verify_run(store, run_id_of(n)).valid for n in range(RUNS))
    named = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    assert len(named) == 1 and str(bad) in named[0] and "marker" in named[0], named


@pytest.mark.parametrize("name", sorted(STRAYS))
def test_given_a_stray_parquet_when_every_command_runs_then_each_reads_on_and_doctor_names_it(
    store_dir: Path, name: str
) -> None:
    bad = _stray(store_dir, STRAYS[name])
    for args in (("runs",), ("show", run_id_of(1)), ("verify", "last"),
                 ("sql", "SELECT DISTINCT run_id FROM events")):
        done = _cli(store_dir, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert PHANTOM not in done.stdout
        assert len([line for line in done.stderr.splitlines() if str(bad) in line]) == 1
    doctor = _cli(store_dir, "doctor")
    assert doctor.returncode == 1 and f"damaged  {bad}" in doctor.stdout, doctor.stdout


def test_given_a_sealed_file_written_before_markers_when_read_then_it_still_counts(
    store_dir: Path,
) -> None:
    for path in sorted(store_dir.glob("*/**/*.parquet")):  # as older writers left them
        table = pq.read_table(path, partitioning=None)
        pq.write_table(table.replace_schema_metadata({}), path)
        assert b"footprint.store" not in (pq.read_metadata(path).metadata or {})
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        with open_store(store_dir) as store:
            assert len(list_runs(store)) == RUNS
            assert all(verify_run(store, run_id_of(n)).valid for n in range(RUNS))


def _inside_data(root: Path) -> Path:
    """Garbage over the first page of run 0's payloads; the footer is untouched."""
    for path in _events_files(root):
        if run_id_of(0) in pq.read_table(path, columns=["run_id"])["run_id"].to_pylist():
            meta = pq.read_metadata(path)
            names = meta.schema.to_arrow_schema().names
            start = meta.row_group(0).column(names.index("payload")).data_page_offset
            data = bytearray(path.read_bytes())
            data[start:start + 24] = b"\xa5" * 24
            path.write_bytes(bytes(data))
            return path
    raise AssertionError("no file holds run 0")


def test_given_a_bit_rotted_file_when_store_sql_reads_then_it_is_skipped_and_named(
    store_dir: Path,
) -> None:
    bad = _inside_data(store_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with open_store(store_dir) as store:
            rows = store.sql("SELECT run_id, max(length(payload)) FROM events GROUP BY 1")
            assert sorted(r[0] for r in rows.fetchall()) == [run_id_of(1), run_id_of(2)]
    named = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    assert len(named) == 1 and str(bad) in named[0], named


def test_given_a_bit_rotted_file_when_footprint_sql_reads_then_it_is_skipped_and_named(
    store_dir: Path,
) -> None:
    bad = _inside_data(store_dir)
    done = _cli(store_dir, "sql", "SELECT run_id, max(length(payload)) FROM events GROUP BY 1")
    assert done.returncode == 0, done.stderr
    assert run_id_of(1) in done.stdout and run_id_of(0) not in done.stdout
    assert len([line for line in done.stderr.splitlines() if str(bad) in line]) == 1, done.stderr


def test_given_more_rows_than_the_cap_when_footprint_sql_runs_then_it_cuts_and_says_so(
    store_dir: Path,
) -> None:
    done = _cli(store_dir, "sql", "SELECT * FROM range(100000)", "--limit", "5",
                "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["range", "0", "1", "2", "3", "4"]
    assert "only the first 5 rows" in done.stderr
    default = _cli(store_dir, "sql", "SELECT * FROM range(100000)", "--format", "csv")
    assert len(default.stdout.splitlines()) == 10_001 and "10,000" in default.stderr
    every = _cli(store_dir, "sql", "SELECT * FROM range(20000)", "--limit", "0",
                 "--format", "csv")
    assert len(every.stdout.splitlines()) == 20_001 and "only the first" not in every.stderr


@pytest.mark.parametrize("how", ["deleted", "damaged"])
def test_given_a_runs_events_file_lost_when_verify_names_the_run_then_it_says_what_is_missing(
    store_dir: Path, how: str,
) -> None:
    for path in _events_files(store_dir):
        if run_id_of(0) in pq.read_table(path, columns=["run_id"])["run_id"].to_pylist():
            lost = path
    if how == "deleted":
        lost.unlink()
    else:
        _inside_data(store_dir)
    done = _cli(store_dir, "verify", run_id_of(0))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "missing record" in done.stdout and "no run" not in done.stderr, done.stdout
    assert (str(lost) in done.stderr) == (how == "damaged")


@pytest.mark.parametrize("args", [[b"sql", b"SELECT '\xff'"], [b"verify", b"\xfe\xff"],
                                  [b"show", b"run-\xc3"]])
def test_given_bytes_that_are_not_utf8_when_a_command_reads_them_then_a_usage_error(
    store_dir: Path, args: list[bytes],
) -> None:
    done = subprocess.run([sys.executable.encode(), b"-m", b"lens.cli", *args, b"--store",
                           bytes(store_dir)], capture_output=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert b"not valid UTF-8" in done.stderr and len(done.stderr.splitlines()) == 1


async def test_given_a_stray_parquet_when_the_lens_lists_runs_then_no_phantom_run(
    store_dir: Path,
) -> None:
    from lens.tui import LensApp
    from lens.tui._runs import RunLines

    _stray(store_dir, STRAYS["segment-name"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)  # named once; the CLI tests count it
        app = LensApp(store_dir, run=None)
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(400):  # until the runs list has loaded
                await pilot.pause(0.05)
                table = app.screen.query_one(RunLines)
                if table.count and all(w.is_finished for w in app.workers):
                    break
            listed = {table.run_id(i) for i in range(table.count)}
    assert listed == {run_id_of(n) for n in range(RUNS)}
