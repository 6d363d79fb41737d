"""One bad record costs one run: a payload that is not JSON, or a stray file of a subset of
the columns, leaves every other run listed, queryable and verified; ``verify`` names the
file and row of the bad one, ``doctor`` lists it and ``--quarantine`` sets its run aside."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_scale import run_id_of, write_many_runs

from recorder import open_store, verify_run

RUNS = 6


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("blast") / "store"
    write_many_runs(root, RUNS, iterations=2, together=3)
    return root


def _copy(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(pristine, root, ignore=shutil.ignore_patterns("summaries"))
    return root


def _first_events(root: Path) -> Path:
    return sorted((root / "events").rglob("*.parquet"))[0]


def _spoil_run_end(path: Path) -> tuple[str, int, int]:
    """Flip one bit of the first ``run.end`` payload of ``path`` so it is no longer JSON
    (the file is rewritten whole, so it still reads); its run id, seq and row."""
    table = pq.read_table(path, partitioning=None)
    rows = table.to_pylist()
    row = next(i for i, r in enumerate(rows) if r["type"] == "run.end")
    payload = str(rows[row]["payload"])
    rows[row]["payload"] = payload[:-1] + chr(ord(payload[-1]) ^ 2)  # '}' -> '\x7f'
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return str(rows[row]["run_id"]), int(rows[row]["seq"]), row


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args, "--store", str(root)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_given_a_run_end_payload_that_is_not_json_when_sql_reads_runs_then_every_run_is_there(
    pristine: Path, tmp_path: Path,
) -> None:
    root = _copy(pristine, tmp_path)
    bad, _, _ = _spoil_run_end(_first_events(root))
    store = open_store(root)
    rows = store.sql("SELECT run_id, answer FROM runs ORDER BY run_id").fetchall()
    assert [r[0] for r in rows] == [run_id_of(n) for n in range(RUNS)]
    assert dict(rows)[bad] is None  # the bad payload's values read as NULL in its own row
    assert all(answer for run, answer in rows if run != bad)
    listed = _cli(root, "sql", "SELECT * FROM runs")
    assert listed.returncode == 0, listed.stderr


def test_given_a_run_end_payload_that_is_not_json_when_verified_then_only_its_run_is_broken(
    pristine: Path, tmp_path: Path,
) -> None:
    root = _copy(pristine, tmp_path)
    path = _first_events(root)
    bad, seq, row = _spoil_run_end(path)
    store = open_store(root)
    for n in range(RUNS):
        result = verify_run(store, run_id_of(n))
        assert result.valid == (run_id_of(n) != bad), result.summary()
    broken = verify_run(store, bad)
    assert (broken.broken_seq, broken.reason) == (seq, "hash mismatch")
    assert f"file {path}, row {row}" in broken.detail
    shown = _cli(root, "verify", bad)
    assert shown.returncode == 1 and f"row {row}" in shown.stdout, shown.stdout + shown.stderr


def test_given_a_run_end_payload_that_is_not_json_when_doctor_runs_then_it_names_the_row(
    pristine: Path, tmp_path: Path,
) -> None:
    root = _copy(pristine, tmp_path)
    path = _first_events(root)
    bad, _, row = _spoil_run_end(path)
    found = _cli(root, "doctor")
    assert found.returncode == 1, found.stdout
    assert f"{path}, row {row}: the payload" in found.stdout and bad in found.stdout
    fixed = _cli(root, "doctor", "--quarantine")
    assert fixed.returncode == 0 and f"set aside run {bad}" in fixed.stdout, fixed.stdout
    assert (root / "quarantine" / path.relative_to(root)).exists()
    assert _cli(root, "doctor").returncode == 0
    store = open_store(root)
    for n in range(RUNS):
        assert verify_run(store, run_id_of(n)).valid == (run_id_of(n) != bad)
    assert verify_run(store, bad).reason == "missing record"


@pytest.mark.parametrize(("name", "marked"), [("extra.parquet", True),
                                              ("20260101T000000-1-deadbeef-00009.parquet",
                                               False)])
def test_given_a_stray_file_of_a_subset_of_the_columns_when_read_then_only_its_runs_suffer(
    pristine: Path, tmp_path: Path, name: str, marked: bool,
) -> None:
    root = _copy(pristine, tmp_path)
    path = _first_events(root)
    table = pq.read_table(path, partitioning=None)
    first = str(table.column("run_id")[0])
    columns = ["run_id", "seq", "ts", "type", "payload"]
    subset = table.select(columns if marked else [*columns, "prev_check", "row_check"])
    subset = subset.filter(pa.compute.equal(subset.column("run_id"), first))
    pq.write_table(subset if marked else subset.replace_schema_metadata({}),
                   path.parent / name)
    listed = _cli(root, "runs")
    assert listed.returncode == 0, listed.stderr
    assert all(run_id_of(n) in listed.stdout for n in range(RUNS))
    store = open_store(root)
    for n in range(RUNS):
        assert verify_run(store, run_id_of(n)).valid == (run_id_of(n) != first)
    assert verify_run(store, first).reason == "duplicate record"
    assert str(path.parent / name) in verify_run(store, first).detail
