"""Damaged store files: each is skipped with one warning naming it, on every read path.

Four kinds of damage (a sealed file damaged inside its data under an intact
footer, one byte that is not UTF-8, a live segment in another schema, a
stray Parquet file whose ``seq`` is text): every other run stays queryable
and verifiable, through the API and the real CLI; ``footprint doctor``
names the file and ``--quarantine`` moves it aside.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_scale import one_run_per_segment, run_id_of

from recorder import (
    EventQuery,
    RunQuery,
    StoreReader,
    StoreWarning,
    list_runs,
    open_store,
    verify_run,
)

RUNS = 4


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_run_per_segment(tmp_path_factory.mktemp("damage"), RUNS, 3)


@pytest.fixture
def store_dir(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(pristine, root)
    return root


def _file_of(root: Path, run: int) -> Path:
    for path in sorted((root / "events").glob("*/*.parquet")):
        if run_id_of(run) in pq.read_table(path, columns=["run_id"])["run_id"].to_pylist():
            return path
    raise AssertionError(f"no events file holds run {run}")


def _inside_data(root: Path) -> Path:
    """Garbage over the first page header of run 0's payloads; the footer is untouched."""
    path = _file_of(root, 0)
    meta = pq.read_metadata(path)
    column = meta.row_group(0).column(meta.schema.to_arrow_schema().names.index("payload"))
    data = bytearray(path.read_bytes())
    start = column.data_page_offset
    data[start:start + 24] = b"\xa5" * 24
    path.write_bytes(bytes(data))
    return path


def _not_utf8(root: Path) -> Path:
    """Run 0's file rewritten plainly, then one byte of a payload made 0xFF."""
    path = _file_of(root, 0)
    table = pq.read_table(path)
    pq.write_table(table, path, compression="none", use_dictionary=False,
                   write_statistics=False)
    data = bytearray(path.read_bytes())
    at = data.index(b"request 0")
    data[at] = 0xFF
    path.write_bytes(bytes(data))
    return path


def _live_other_schema(root: Path) -> Path:
    path = root / "live" / "20260101T000000-999999-deadbeef-00001.events.arrows"
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("run_id", pa.string()), ("seq", pa.string()), ("note", pa.string())])
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
        writer.write_table(pa.table({"run_id": ["x"], "seq": ["one"], "note": ["?"]},
                                    schema=schema))
    return path


def _stray_text_seq(root: Path) -> Path:
    good = pq.read_table(_file_of(root, 1))
    seq = good.schema.get_field_index("seq")
    stray = good.set_column(seq, "seq", pa.array([str(v) for v in good["seq"].to_pylist()]))
    path = root / "events" / "date=2026-01-01" / "stray.parquet"
    pq.write_table(stray.drop_columns(["date"]) if "date" in stray.column_names else stray,
                   path)
    return path


DAMAGE: dict[str, tuple[Callable[[Path], Path], set[int]]] = {
    "inside-data": (_inside_data, {0}),
    "not-utf8": (_not_utf8, {0}),
    "live-other-schema": (_live_other_schema, set()),
    "stray-text-seq": (_stray_text_seq, set()),
}


def _read_everything(root: Path, lost: set[int]) -> list[str]:
    """Every read path over every run; the StoreWarnings raised on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = open_store(root)
        store.rows("SELECT count(*), sum(length(payload)) FROM events")
        listed = set(list_runs(store, RunQuery(limit=100))["run_id"].to_pylist())
        reader = StoreReader(store)
        for n in range(RUNS):
            run = run_id_of(n)
            if n in lost:
                assert run not in listed
                continue
            assert run in listed
            assert reader.summary(run).events == 3 * 8 + 2
            assert len(store.events(run)) == 3 * 8 + 2
            assert reader.page(EventQuery(run_id=run), limit=5).num_rows == 5
            assert verify_run(store, run).valid, run
        store.close()
    return [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_given_a_damaged_file_when_every_read_path_runs_then_one_warning_names_it(
    store_dir: Path, kind: str
) -> None:
    damage, lost = DAMAGE[kind]
    bad = damage(store_dir)
    named = _read_everything(store_dir, lost)
    assert len(named) == 1 and str(bad) in named[0], named


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args, "--store", str(root)],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_given_a_damaged_file_when_the_cli_reads_then_other_runs_show_and_verify(
    store_dir: Path, kind: str
) -> None:
    damage, _ = DAMAGE[kind]
    bad = damage(store_dir)
    for args in (("runs",), ("show", run_id_of(2)), ("verify", run_id_of(3))):
        done = _cli(store_dir, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
        warned = [line for line in done.stderr.splitlines() if str(bad) in line]
        # verify reads only the run's own files (a damaged file of another run is not its
        # business: the blast radius is that run); a listing names it, once
        assert len(warned) == (args[0] != "verify") or len(warned) == 1, (args, done.stderr)


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_given_a_damaged_file_when_doctor_quarantines_then_the_store_reads_clean(
    store_dir: Path, kind: str
) -> None:
    damage, lost = DAMAGE[kind]
    bad = damage(store_dir)
    listed = _cli(store_dir, "doctor")
    assert listed.returncode == 1 and f"damaged  {bad}" in listed.stdout, listed.stdout
    fixed = _cli(store_dir, "doctor", "--quarantine")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert not bad.exists()
    assert (store_dir / "quarantine" / bad.relative_to(store_dir)).exists()
    assert _read_everything(store_dir, lost) == []
    assert _cli(store_dir, "doctor").returncode == 0


def test_given_a_healthy_store_when_doctor_runs_then_exit_0(store_dir: Path) -> None:
    done = _cli(store_dir, "doctor")
    assert done.returncode == 0 and "healthy" in done.stdout, done.stdout + done.stderr
