"""The production loop: labelled runs, feedback, `runs --score … --release …`, why, snapshot.

One store of 200 support-desk runs (``examples/feedback_loop.py``) is shared by the
module; each test adds what it needs to its own copy where it writes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from otlp_receiver import HttpReceiver

from footprint import Agent, ScriptedModel
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, feedback, open_store, row_check, verify_run
from recorder.otel import OTelSink, otlp_exporter, trace_id_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import feedback_loop  # noqa: E402

DESK = "lens._examples.support_desk:make_agent"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "examples")])}


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[str]]:
    """``(store, run ids, thumbs-down run ids of release 1.4)``."""
    store = tmp_path_factory.mktemp("loop") / "store"
    ids = feedback_loop.record(store)
    return store, ids, feedback_loop.collect_feedback(store, ids)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *argv], capture_output=True,
                          text=True, env=ENV, timeout=120, check=False)


def test_given_the_example_store_when_listed_since_7d_then_every_run_is_there_in_order(
    loop: tuple[Path, list[str], list[str]],
) -> None:
    store, ids, _ = loop
    listed = _cli("runs", "--since", "7d", "--limit", "0", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    shown = [line.split()[0] for line in listed.stdout.splitlines()[2:] if line.strip()]
    assert len(shown) == 200 and set(shown) == set(ids)
    one_day = _cli("runs", "--since", "1d", "--limit", "0", "--store", str(store))
    day_ids = {line.split()[0] for line in one_day.stdout.splitlines()[2:] if line.strip()}
    assert 0 < len(day_ids) < 200  # spread over days, as real traffic is


@pytest.mark.parametrize("form", ["json", "jsonl", "csv"])
def test_given_the_example_store_when_runs_printed_for_tools_then_every_cell_is_whole(
    loop: tuple[Path, list[str], list[str]], form: str,
) -> None:
    import csv
    import io
    import json

    store, ids, flagged = loop
    done = _cli("runs", "--format", form, "--limit", "0", "--store", str(store))
    assert done.returncode == 0, done.stderr
    if form == "json":
        records = json.loads(done.stdout)
    elif form == "jsonl":
        records = [json.loads(line) for line in done.stdout.splitlines()]
    else:
        records = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["run_id"] for r in records] == ids  # oldest first, as the table
    by_id = {r["run_id"]: r for r in records}
    assert all(by_id[i]["status"] == "complete" for i in ids)
    answer = by_id[flagged[0]]["answer"]
    assert len(answer) > 48 and "…" not in answer  # the table cuts at 48
    scores = by_id[flagged[0]]["scores"]
    assert (scores == "helpful=0") if form == "csv" else (scores == {"helpful": 0.0}
                                                           or scores == [["helpful", 0.0]])
    if form != "csv":
        assert records[0]["started"].startswith("20") and "T" in records[0]["started"]


def test_given_200_labelled_runs_with_feedback_when_filtered_and_explained_then_snapshot_passes(
    loop: tuple[Path, list[str], list[str]], tmp_path: Path,
) -> None:
    store, ids, flagged = loop
    assert len(ids) == 200 and len(flagged) == 3
    listed = _cli("runs", "--score", "helpful<1", "--release", "1.4", "--limit", "500",
                  "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    shown = {line.split()[0] for line in listed.stdout.splitlines()[2:]}
    assert shown == set(flagged)
    bad = flagged[0]
    why = _cli("why", bad, "--store", str(store))
    assert why.returncode == 0 and f"why · run {bad}" in why.stdout
    snap = _cli("snapshot", bad, "--agent", DESK, "-o", str(tmp_path / "out"), "--store",
                str(store))
    assert snap.returncode == 0, snap.stderr
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "no:textual-snapshot", "-p", "no:asyncio", str(tmp_path / "out")],
        capture_output=True, text=True, env=ENV, timeout=300, check=False, cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout[-2000:]
    assert "2 passed" in tests.stdout


def test_given_feedback_when_verified_then_its_record_is_chained_after_the_end(
    loop: tuple[Path, list[str], list[str]],
) -> None:
    store, _, flagged = loop
    with open_store(store) as opened:
        result = verify_run(opened, flagged[0])
        rows = opened.rows("SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq",
                           [flagged[0]])
    assert result.valid and result.complete, result.summary()
    assert [t for _, t in rows[-2:]] == ["run.end", "feedback.recorded"]


def _copy(loop: tuple[Path, list[str], list[str]], tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(loop[0], copy)
    return copy


def _feedback_file(store: Path, run_id: str) -> Path:
    for path in (store / "events").rglob("*.parquet"):
        table = pq.read_table(path)
        runs = set(table.column("run_id").to_pylist())
        if runs == {run_id} and set(table.column("type").to_pylist()) == {"feedback.recorded"}:
            return path
    raise AssertionError(f"no feedback segment of {run_id}")


def test_given_an_edited_feedback_value_when_verified_then_the_chain_names_it(
    loop: tuple[Path, list[str], list[str]], tmp_path: Path,
) -> None:
    store = _copy(loop, tmp_path)
    run_id = loop[2][0]
    path = _feedback_file(store, run_id)
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["payload"] = rows[0]["payload"].replace('"value":0.0', '"value":1.0')
    rows[0]["row_check"] = row_check(rows[0]["payload"])  # a careful forger re-checks it
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with open_store(store) as opened:
        result = verify_run(opened, run_id)
    assert not result.valid and result.broken_seq == rows[0]["seq"]
    assert result.reason == "hash mismatch"


def test_given_a_tool_event_forged_after_the_feedback_when_verified_then_refused(
    loop: tuple[Path, list[str], list[str]], tmp_path: Path,
) -> None:
    store = _copy(loop, tmp_path)
    run_id = loop[2][0]
    table = pq.read_table(_feedback_file(store, run_id))
    last = table.to_pylist()[-1]
    payload = '{"result":"refund approved","tool_call_id":"c99","tool_name":"t"}'
    forged = {**last, "seq": last["seq"] + 1, "type": "tool.end", "payload": payload,
              "prev_check": last["row_check"], "row_check": row_check(payload)}
    schema = table.schema.remove(table.schema.get_field_index("date")) \
        if "date" in table.schema.names else table.schema
    forged.pop("date", None)
    day = next((store / "events").iterdir())
    pq.write_table(pa.Table.from_pylist([forged], schema=schema), day / "forged.parquet")
    with open_store(store) as opened:
        result = verify_run(opened, run_id)
    assert not result.valid and result.broken_seq == last["seq"] + 1
    assert result.reason == "chain broken" and "after the run ended" in result.detail


def test_given_an_otel_sink_when_feedback_is_given_then_an_evaluation_reaches_the_receiver(
    tmp_path: Path,
) -> None:
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        with Recorder(sinks=[ParquetSink(tmp_path), sink], processors=[sink.stamp]) as rec:
            agent = Agent(provider=ScriptedModel(["Refund sent."]), model="m", sink=rec,
                          name="desk")
            run_id = agent.run_sync("refund please").run_id
        assert receiver.wait_for(lambda s: any(x.parent_id == "" for x in s))
        later = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                         schedule_delay_s=0.05)  # feedback comes later, from another process
        event = feedback([tmp_path, later], run_id, "helpful", value=0, label="wrong",
                         comment="no refund was sent", by="u-1")
        later.shutdown()
        assert receiver.wait_for(lambda s: any(x.name == "gen_ai.evaluation.result" for x in s))
    spans = {s.span_id: s for s in receiver.spans}
    root = next(s for s in spans.values() if s.parent_id == "")
    (evaluation,) = [s for s in spans.values() if s.name == "gen_ai.evaluation.result"]
    assert evaluation.parent_id == root.span_id
    assert evaluation.trace_id == root.trace_id == f"{trace_id_of(run_id):032x}"
    ((name, ts, attrs),) = evaluation.events
    assert name == "gen_ai.evaluation.result" and ts == event.ts
    assert attrs == {"gen_ai.evaluation.name": "helpful", "gen_ai.evaluation.score.value": 0.0,
                     "gen_ai.evaluation.score.label": "wrong",
                     "gen_ai.evaluation.explanation": "no refund was sent",
                     "footprint.feedback.by": "u-1"}
    with open_store(tmp_path) as store:
        assert verify_run(store, run_id).valid
        assert store.rows("SELECT name, value, label, given_by FROM scores") == [
            ("helpful", 0.0, "wrong", "u-1")]


def test_given_a_judge_when_evaluate_runs_then_every_ended_run_gets_its_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    ids = feedback_loop.record(store, runs=6)
    code = footprint(["evaluate", "--judge", "feedback_loop:helpful", "--where",
                      "release=1.4", "--store", str(store)])
    out = capsys.readouterr().out
    assert code == 0 and "3 scores recorded on 3 runs" in out
    with open_store(store) as opened:
        scored = opened.rows("SELECT run_id, name, value, given_by FROM scores ORDER BY run_id")
        runs = dict(opened.rows("SELECT run_id, scores FROM runs"))
        assert all(verify_run(opened, r).valid for r in ids)
    assert {r for r, *_ in scored} == {ids[1], ids[3], ids[5]}
    assert {(n, v, b) for _, n, v, b in scored} == {
        ("mentions_refund", 1.0, "judge:feedback_loop:helpful")}
    assert runs[ids[1]] == {"mentions_refund": 1.0} and runs[ids[0]] is None


@pytest.mark.parametrize(("argv", "expected"), [
    (["runs", "--score", "helpful<<1"], "score filter 'helpful<<1' is not NAME OP VALUE"),
    (["runs", "--score", "helpful<good"], "< needs a number, not 'good'"),
    (["runs", "--since", "2x"], "since='2x': pass an age such as 90s, 30m, 2h"),
    (["feedback", "last", "--name", "helpful"], "give --value NUMBER or --label TEXT"),
    (["feedback", "last", "--name", "helpful", "--label", ""], "Score(label=''): the label is "
                                                                "empty"),
    (["feedback", "nope", "--name", "helpful", "--value", "1"], "no run 'nope'"),
    (["evaluate", "--judge", "feedback_loop:helpfull"], "did you mean 'helpful'"),
    (["evaluate", "--judge", "feedback_loop:helpful", "--where", "relase=1.4"],
     "did you mean 'release'"),
])
def test_given_bad_filter_or_feedback_input_when_run_then_exit_2_with_one_line(
    loop: tuple[Path, list[str], list[str]], argv: list[str], expected: str,
) -> None:
    done = _cli(*argv, "--store", str(loop[0]))
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_given_stored_feedback_when_the_run_is_exported_then_its_evaluation_is_under_the_root(
    loop: tuple[Path, list[str], list[str]],
) -> None:
    store, _, flagged = loop
    with HttpReceiver() as receiver:
        done = _cli("export-otlp", flagged[0], "--endpoint", receiver.endpoint,
                    "--store", str(store))
        assert done.returncode == 0, done.stderr
        assert receiver.wait_for(lambda s: any(x.name == "gen_ai.evaluation.result" for x in s))
    root = next(s for s in receiver.spans if s.parent_id == "")
    (evaluation,) = [s for s in receiver.spans if s.name == "gen_ai.evaluation.result"]
    assert root.name == "invoke_agent support-desk" and evaluation.parent_id == root.span_id
    assert evaluation.attributes["gen_ai.evaluation.score.value"] == 0.0
    assert "footprint.incomplete" not in root.attributes


def test_given_the_live_parquet_sink_when_feedback_is_given_through_it_then_the_run_verifies(
    tmp_path: Path,
) -> None:
    sink = ParquetSink(tmp_path)
    with Recorder(sinks=[sink]) as rec:
        run_id = Agent(provider=ScriptedModel(["ok"]), model="m", sink=rec).run_sync("hi").run_id
        rec.flush()
        event = feedback(sink, run_id, "helpful", label="good")
    with open_store(tmp_path) as store:
        assert verify_run(store, run_id).valid
        assert store.rows("SELECT seq, label FROM scores") == [(event.seq, "good")]
        assert store.rows("SELECT scores FROM runs") == [(None,)]  # a label has no value


def test_given_a_run_that_never_ended_when_feedback_is_given_then_it_is_refused(
    tmp_path: Path,
) -> None:
    from footprint import RunError
    from footprint.events import RunStart

    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        rec.emit(RunStart(run_id="cut-off", seq=0, ts=1, user_message="hi"))
    with pytest.raises(RunError, match="run 'cut-off' has not ended"):
        feedback(tmp_path, "cut-off", "helpful", value=0)


def test_given_feedback_when_the_run_is_shown_then_it_follows_the_answer(
    loop: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    store, _, flagged = loop
    assert footprint(["show", flagged[0], "--store", str(store)]) == 0
    tail = capsys.readouterr().out.splitlines()[-3:]
    assert tail[0].startswith("answer: APPROVED")
    assert tail[1].startswith('feedback: helpful=0 "it promised a refund it can\'t give" by user-')
    assert tail[2].startswith("cost: ")  # the run's cost closes the listing


_GIVE = """
import sys
from recorder import feedback
for k in range(3):
    feedback(sys.argv[1], sys.argv[2], "helpful", value=k, by=sys.argv[3])
"""


def test_given_four_processes_giving_feedback_on_one_run_when_verified_then_all_are_chained(
    tmp_path: Path,
) -> None:
    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        run_id = Agent(provider=ScriptedModel(["ok"]), model="m", sink=rec).run_sync("hi").run_id
    procs = [subprocess.Popen([sys.executable, "-c", _GIVE, str(tmp_path), run_id, f"p{i}"],
                              env=ENV, stderr=subprocess.PIPE, text=True) for i in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-1000:]
    with open_store(tmp_path) as store:
        result = verify_run(store, run_id)
        seqs = [s for (s,) in store.rows("SELECT seq FROM scores ORDER BY seq")]
    assert result.valid, result.summary()
    assert len(seqs) == 12 and len(set(seqs)) == 12


def test_given_the_judge_example_in_evaluates_help_when_loaded_then_it_is_the_examples_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lens.cli._evaluate import _EXAMPLE
    from lens.playback._agent_ref import load_target

    monkeypatch.chdir(ROOT)
    judge = load_target(_EXAMPLE, flag="--judge", kind="a judge function")
    assert judge.__name__ == "helpful"
    assert Path(judge.__code__.co_filename) == ROOT / "examples" / "feedback_loop.py"


def test_given_a_misspelt_score_name_when_runs_are_filtered_then_it_says_no_run_has_it(
    loop: tuple[Path, list[str], list[str]],
) -> None:
    store = str(loop[0])
    done = _cli("runs", "--score", "helpfull<1", "--release", "1.4", "--store", store)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"no runs match those filters in {store}",
        "no run has a score named 'helpfull' (did you mean 'helpful'?); the scores runs have: "
        "helpful"]
    none_low = _cli("runs", "--score", "helpful<-1", "--store", store)  # a known name: no hint
    assert none_low.stdout.splitlines() == [f"no runs match those filters in {store}"]
