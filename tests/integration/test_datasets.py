"""Datasets from recorded runs: `dataset create --from-runs`, `add`, `list/show/export`,
versions that never change, chained rows, the `datasets`/`dataset_items` views."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint import Agent, FunctionModel, StepClock
from footprint._errors import RunError
from footprint.events import EventSink
from footprint.providers import LLMRequest
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, feedback, open_store
from recorder._datasets import DatasetItem, add_items, load_dataset


def _echo(request: LLMRequest) -> str:
    said = [m.content for m in request.messages if m.role == "user"]
    return f"you said {said[-1]!r} after {len(said) - 1} earlier messages"


def _record(store: Path, n: int) -> list[str]:
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        agent = Agent(provider=FunctionModel(_echo), model="echo", sink=recorder,
                      clock=StepClock())
        ids = [agent.run_sync(f"question {i}").run_id for i in range(n)]
        ids.append(agent.follow_up_sync("and a follow-up").run_id)
    finally:
        recorder.close()
    return ids


@pytest.fixture()
def store(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "store"
    ids = _record(root, 6)
    for i in (1, 4):
        feedback(root, ids[i], "helpful", value=0)
    feedback(root, ids[4], "expected", label="FOUR")
    feedback(root, ids[2], "helpful", value=1)
    return root, ids


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = footprint(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_given_feedback_when_created_from_runs_scored_below_1_then_exactly_those_runs_are_items(
    store: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    root, ids = store
    code, out = _cli(capsys, "dataset", "create", "bad", "--from-runs", "--score", "helpful<1",
                     "--expected-from-feedback", "--store", str(root))
    assert code == 0, out
    data = load_dataset(root, "bad")
    assert [i.source_run for i in data.items] == [ids[1], ids[4]]
    assert [i.message for i in data.items] == ["question 1", "question 4"]
    assert [i.expected for i in data.items] == [None, "FOUR"]
    assert data.items[1].labels == {"helpful": "0", "expected": "FOUR"}
    with open_store(root) as s:
        rows = s.rows("SELECT source_run FROM dataset_items WHERE dataset = 'bad' "
                      "ORDER BY position")
    assert [r[0] for r in rows] == [ids[1], ids[4]]
    code, out = _cli(capsys, "sql", "SELECT dataset, version, items FROM datasets",
                     "--format", "csv", "--store", str(root))  # the SQL sandbox reads them
    assert (code, out.splitlines()[1:]) == (0, ["bad,1,2"])


def test_given_a_dataset_when_runs_are_added_then_a_new_version_and_the_old_one_unchanged(
    store: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    root, ids = store
    assert _cli(capsys, "dataset", "create", "d", "--from-runs", "--limit", "2",
                "--store", str(root))[0] == 0
    code, out = _cli(capsys, "dataset", "add", "d", ids[0], ids[1], "--expected", "yes",
                     "--store", str(root))
    assert code == 0, out
    assert "dataset d v2: 4 items" in out
    first, second = load_dataset(root, "d", 1), load_dataset(root, "d", 2)
    assert len(first.items) == 2 and len(second.items) == 4
    assert [i.expected for i in second.items] == [None, None, "yes", "yes"]
    with open_store(root) as s:
        assert s.rows("SELECT version, items FROM datasets ORDER BY version") == [(1, 2),
                                                                                  (2, 4)]


def test_given_a_follow_up_turn_when_added_then_its_item_holds_the_conversation_before_it(
    store: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    root, ids = store
    assert _cli(capsys, "dataset", "create", "f", "--from-runs", "--search", "follow-up",
                "--store", str(root))[0] == 0
    (item,) = load_dataset(root, "f").items
    assert item.source_run == ids[-1] and item.source_turn == 1
    assert item.message == "and a follow-up"
    assert [m["role"] for m in item.history] == ["user", "assistant"]
    assert item.history[0]["content"] == "question 5"
    assert item.history[1]["content"].startswith("you said 'question 5'")


def test_given_a_dataset_when_exported_then_a_json_reader_gets_one_flat_row_per_item(
    store: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    root, ids = store
    _cli(capsys, "dataset", "create", "e", "--from-runs", "--store", str(root))
    out = tmp_path / "e.jsonl"
    assert _cli(capsys, "dataset", "export", "e", "-o", str(out), "--store", str(root))[0] == 0
    table = pj.read_json(out)  # the reader the `datasets` JSON loader is built on
    assert table.num_rows == len(ids)
    assert all(not str(t).startswith(("struct", "list")) for t in table.schema.types)
    history = [json.loads(h) for h in table.column("history").to_pylist()]
    assert [len(h) for h in history] == [0] * (len(ids) - 1) + [2]


def test_given_an_item_row_edited_in_its_file_when_loaded_then_the_chain_names_the_row(
    store: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    root, _ = store
    _cli(capsys, "dataset", "create", "t", "--from-runs", "--store", str(root))
    path = root / "datasets" / "t.v0001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[3]["message"] = "question 99"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with pytest.raises(RunError, match="row 3 was changed"):
        load_dataset(root, "t")
    code, out = _cli(capsys, "dataset", "show", "t", "--store", str(root))
    assert code != 0 and "tampered" in out


_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)


@settings(max_examples=25, deadline=None)
@given(items=st.lists(st.builds(
    DatasetItem, item_id=st.uuids().map(str), message=_text,
    history=st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                            "content": _text}), max_size=3).map(tuple),
    expected=st.none() | _text,
    labels=st.none() | st.dictionaries(_text, _text, max_size=3),
    source_run=st.none() | _text, source_turn=st.integers(0, 9)), max_size=5))
def test_given_any_items_when_stored_and_loaded_then_they_come_back_equal(
    items: list[DatasetItem], tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("roundtrip")
    add_items(root, "rt", items)
    assert load_dataset(root, "rt").items == tuple({i.item_id: i for i in items}.values())


def make_echo(sink: EventSink | None = None) -> Agent:
    """The echo agent, as ``experiment run --agent`` builds it."""
    return Agent(provider=FunctionModel(_echo), model="echo", sink=sink, clock=StepClock())


def test_given_a_follow_up_item_when_an_experiment_runs_it_then_the_model_sees_its_history(
    store: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    root, _ = store
    _cli(capsys, "dataset", "create", "f", "--from-runs", "--search", "follow-up",
         "--store", str(root))
    code, out = _cli(capsys, "experiment", "run", "f", "--agent", f"{__file__}:make_echo",
                     "--name", "echo", "--expect", "after 1 earlier", "--store", str(root))
    assert code == 0, out
    with open_store(root) as s:
        ((answer, passed),) = s.rows("SELECT answer, passed FROM experiment_results")
    assert (answer, passed) == ("you said 'and a follow-up' after 1 earlier messages", True)
