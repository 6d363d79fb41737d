"""Damaged cached outlines: derived data never taken over the record.

A power loss leaves a zero-length or torn file in ``summaries/``; another
tool or an attacker may leave garbage, another schema, or an edited answer.
Every command reads on (the outline is rebuilt from the events files with
one warning), ``runs`` shows the record's answer, and ``footprint doctor``
names the outline and ``--quarantine`` rebuilds it. Real CLI processes.
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

from recorder import RunQuery, StoreWarning, list_runs, open_store

RUNS = 3


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = one_run_per_segment(tmp_path_factory.mktemp("outlines"), RUNS, 2)
    with open_store(root) as store:
        list_runs(store)  # the outlines are cached on first read
    return root


@pytest.fixture
def store_dir(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(pristine, root)
    return root


def _outline_of(root: Path, run: int) -> Path:
    for path in sorted((root / "summaries").glob("*.parquet")):
        if run_id_of(run) in pq.read_table(path, columns=["run_id"])["run_id"].to_pylist():
            return path
    raise AssertionError(f"no cached outline holds run {run}")


def _empty(root: Path) -> Path:
    path = _outline_of(root, 1)
    path.write_bytes(b"")
    return path


def _garbage(root: Path) -> Path:
    path = _outline_of(root, 1)
    path.write_bytes(b"PAR1" + b"\x5a" * 300 + b"PAR1")
    return path


def _other_schema(root: Path) -> Path:
    path = _outline_of(root, 1)
    pq.write_table(pa.table({"level": ["run"], "run_id": [run_id_of(1)]}), path)
    return path


def _torn_inside(root: Path) -> Path:
    path = _outline_of(root, 1)
    meta = pq.read_metadata(path)
    column = meta.row_group(0).column(meta.schema.to_arrow_schema().names.index("run_id"))
    data = bytearray(path.read_bytes())
    start = column.data_page_offset
    data[start:start + 16] = b"\xa5" * 16
    path.write_bytes(bytes(data))
    return path


DAMAGE: dict[str, Callable[[Path], Path]] = {
    "empty": _empty, "garbage": _garbage, "other-schema": _other_schema,
    "torn-inside": _torn_inside,
}


def _forge_answer(root: Path) -> Path:
    path = _outline_of(root, 1)
    table = pq.read_table(path)
    answers = [("issue_refund(100000 -> attacker)" if level == "run" else a)
               for level, a in zip(table["level"].to_pylist(), table["answer"].to_pylist(),
                                    strict=True)]
    at = table.schema.get_field_index("answer")
    pq.write_table(table.set_column(at, "answer", pa.array(answers, pa.string())), path)
    return path


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args, "--store", str(root)],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_given_a_damaged_cached_outline_when_every_command_runs_then_it_reads_on(
    store_dir: Path, kind: str
) -> None:
    bad = DAMAGE[kind](store_dir)
    for args in (("runs",), ("show", run_id_of(1)), ("verify", "last"),
                 ("diff", run_id_of(1), run_id_of(2))):
        done = _cli(store_dir, *args)
        differ = 1 if args[0] == "diff" else 0  # diff: exit 1 when the runs differ
        assert done.returncode == differ, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        warned = [line for line in done.stderr.splitlines() if "outline" in line]
        assert len(warned) <= 1, (args, done.stderr)
    assert pq.read_table(bad).num_rows > 0  # rebuilt in place from the events file


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_given_a_damaged_cached_outline_when_read_then_one_warning_and_every_run(
    store_dir: Path, kind: str
) -> None:
    bad = DAMAGE[kind](store_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with open_store(store_dir) as store:
            runs = list_runs(store, RunQuery(limit=10))
            assert sorted(runs["run_id"].to_pylist()) == [run_id_of(n) for n in range(RUNS)]
            assert store.events(run_id_of(1))
    named = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    assert len(named) == 1 and str(bad) in named[0], named


def test_given_an_edited_cached_answer_when_runs_lists_then_the_record_answer_shows(
    store_dir: Path,
) -> None:
    _forge_answer(store_dir)
    done = _cli(store_dir, "runs")
    assert done.returncode == 0, done.stderr
    assert "attacker" not in done.stdout and "APPROVED order 1" in done.stdout, done.stdout
    assert "disagrees with the record" in done.stderr, done.stderr


@pytest.mark.parametrize("kind", [*sorted(DAMAGE), "forged-answer"])
def test_given_a_wrong_cached_outline_when_doctor_runs_then_it_names_and_rebuilds_it(
    store_dir: Path, kind: str
) -> None:
    bad = (DAMAGE.get(kind) or _forge_answer)(store_dir)
    listed = _cli(store_dir, "doctor")
    assert listed.returncode == 1 and f"damaged  {bad}" in listed.stdout, listed.stdout
    fixed = _cli(store_dir, "doctor", "--quarantine")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "rebuilt" in fixed.stdout
    healthy = _cli(store_dir, "doctor")
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert "attacker" not in _cli(store_dir, "runs").stdout
