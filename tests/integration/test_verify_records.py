"""``footprint verify --records``: every dataset version and experiment file of a store is
checked (each file's chain, the versions' chain, the journal listing every file) and a
tampered, replaced or deleted one is named; the record writers share one preamble."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from footprint import Agent, ScriptedModel
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder
from recorder._datasets import DatasetItem, add_items
from recorder._experiments import ExperimentMeta, ExperimentResult, save_experiment


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs tagged experiment:exp1, dataset ``desk`` v1 and v2, experiment ``exp1``."""
    store = tmp_path_factory.mktemp("records") / "store"
    with Recorder(sinks=[ParquetSink(store)]) as rec:
        ids = [Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec)
               .run_sync("hi", tags=["experiment:exp1"]).run_id for i in range(2)]
    add_items(store, "desk", [DatasetItem(item_id="a", message="Where is my refund?")])
    add_items(store, "desk", [DatasetItem(item_id="b", message="Cancel my order")])
    save_experiment(store, ExperimentMeta(name="exp1", dataset="desk", version=2, agent="a:f",
                                          comparator="item"),
                    [ExperimentResult(item_id=i, repeat=0, run_id=r, answer="x", verdict="ok",
                                      passed=True, cost_usd=None, latency_ms=1.0)
                     for i, r in zip("ab", ids, strict=True)])
    return store


@pytest.fixture
def store(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(template, copy)
    return copy


def _verify(store: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = footprint(["verify", "--records", "--store", str(store)])
    out = capsys.readouterr()
    return code, out.out + out.err


def _rewrite(path: Path, column: str, value: str) -> None:
    """Change one cell and write the file back, its chain columns untouched."""
    table = pq.read_table(path)
    cells = table.column(column).to_pylist()
    cells[0] = value
    pq.write_table(table.set_column(table.schema.get_field_index(column), column,
                                    pa.array(cells, table.schema.field(column).type)), path)


def test_given_records_as_written_when_verified_then_all_are_valid(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _verify(store, capsys)
    assert code == 0
    assert out.strip() == ("records: valid: 2 dataset versions, 1 experiments, journal of 3 "
                           "files")


def _tamper_dataset(store: Path) -> None:
    _rewrite(store / "datasets" / "desk.v0001.parquet", "message", "Where is my money?")


def _tamper_experiment(store: Path) -> None:
    _rewrite(store / "experiments" / "exp1.parquet", "verdict", "fine")


def _delete_first_version(store: Path) -> None:
    (store / "datasets" / "desk.v0001.parquet").unlink()


def _delete_experiment(store: Path) -> None:
    (store / "experiments" / "exp1.parquet").unlink()


def _edit_journal(store: Path) -> None:
    journal = store / "records.journal.jsonl"
    journal.write_text(journal.read_text().replace('"rows": 1', '"rows": 7', 1))


def _plant_a_file(store: Path) -> None:
    shutil.copy(store / "experiments" / "exp1.parquet", store / "experiments" / "exp2.parquet")


@pytest.mark.parametrize(("damage", "expected"), [
    (_tamper_dataset, ["dataset desk v1: row 0 was changed after it was written (its head "
                       "does not match) (tampered)"]),
    (_tamper_experiment, ["experiment exp1: row 0 was changed after it was written (its head "
                          "does not match) (tampered)"]),
    (_delete_first_version, ["dataset desk v1 is missing (v2 continues it: deleted)",
                             "datasets/desk.v0001.parquet: listed in the journal but gone "
                             "(deleted)"]),
    (_delete_experiment, ["experiments/exp1.parquet: listed in the journal but gone (deleted)",
                          "experiment exp1: runs are tagged experiment:exp1 but its file is "
                          "gone (deleted)"]),
    (_edit_journal, ["records.journal.jsonl line 1 does not continue the journal's chain "
                     "(tampered)", "datasets/desk.v0001.parquet: not the file written (1 rows, "
                     "the journal lists 7; or its last head differs: replaced)"]),
    (_plant_a_file, ["experiment exp2: row 0 does not continue the chain",
                     "experiments/exp2.parquet: not in the journal (not written by footprint, "
                     "or added by hand)"]),
], ids=["dataset-tampered", "experiment-tampered", "version-deleted", "experiment-deleted",
        "journal-edited", "file-planted"])
def test_given_a_damaged_record_when_verified_then_each_problem_is_named(
    store: Path, capsys: pytest.CaptureFixture[str], damage: Callable[[Path], None],
    expected: list[str],
) -> None:
    damage(store)
    code, out = _verify(store, capsys)
    assert code == 1, out
    lines = [line.strip() for line in out.splitlines()[1:]]
    assert len(lines) == len(expected), out
    assert all(line.startswith(want) for line, want in zip(lines, expected, strict=True)), out


def test_given_a_store_written_before_the_journal_when_verified_then_chains_are_still_checked(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (store / "records.journal.jsonl").unlink()
    code, out = _verify(store, capsys)
    assert code == 0 and "no journal (written before one was kept: a deleted file cannot be " \
                         "seen)" in out
    _tamper_dataset(store)
    code, out = _verify(store, capsys)
    assert code == 1 and "dataset desk v1: row 0 was changed" in out


def test_given_verify_without_a_run_or_records_when_run_then_it_names_both(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code = footprint(["verify", "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and "verify needs RUN" in err and "--records" in err
