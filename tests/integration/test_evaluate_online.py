"""Online sampled evaluation: ``Recorder(evaluate=JUDGE, sample=…)`` judges a
deterministic sample of the runs it records, in the background, writing the same
score records as ``footprint evaluate``; a judge that raises or blocks never
reaches the run."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint import Agent, ConfigError, ScriptedModel
from recorder import ParquetSink, Recorder, Score, StoredRun, open_store, verify_run
from recorder._online import sampled


def _scores(path: Path) -> dict[str, tuple[str, float, str]]:
    with open_store(path) as store:
        return {str(r): (str(n), float(v), str(b)) for r, n, v, b in store.rows(
            "SELECT run_id, name, value, given_by FROM scores")}


def length(run: StoredRun) -> Score:
    return Score(name="length", value=float(len(run.answer or "")))


def _runs(rec: Recorder, count: int) -> list[str]:
    return [Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec)
            .run_sync("hi").run_id for i in range(count)]


def test_given_a_sample_of_a_fifth_when_40_runs_end_then_exactly_the_hashed_ones_are_judged(
    tmp_path: Path,
) -> None:
    with Recorder(sinks=[ParquetSink(tmp_path / "s")], evaluate=length, sample=0.2) as rec:
        ids = _runs(rec, 40)
    stats = rec.evaluation()
    picked = {r for r in ids if sampled(r, 0.2)}
    assert 0 < len(picked) < 40
    assert set(_scores(tmp_path / "s")) == picked
    assert stats is not None and (stats.seen, stats.sampled, stats.judged, stats.scores,
                                  stats.waiting, stats.failed) == (
        40, len(picked), len(picked), len(picked), 0, {})
    assert {by for _, _, by in _scores(tmp_path / "s").values()} == {
        f"judge:{__name__}:length"}
    with open_store(tmp_path / "s") as store:
        assert all(verify_run(store, r).valid for r in ids)


def test_given_a_judge_that_raises_when_runs_end_then_each_run_finishes_and_the_error_is_named(
    tmp_path: Path,
) -> None:
    def broken(run: StoredRun) -> Score:
        if run.answer == "answer 1":
            raise ValueError("cannot parse answer 1")
        return Score(name="ok", value=1.0)

    with Recorder(sinks=[ParquetSink(tmp_path / "s")], evaluate=broken, sample=1.0) as rec:
        ids = _runs(rec, 3)
    stats = rec.evaluation()
    assert stats is not None
    assert stats.failed == {ids[1]: "ValueError: cannot parse answer 1"}
    assert set(_scores(tmp_path / "s")) == {ids[0], ids[2]}


def test_given_a_slow_judge_when_a_run_ends_then_the_run_is_not_held_by_it(
    tmp_path: Path,
) -> None:
    release = threading.Event()

    def slow(run: StoredRun) -> Score:
        release.wait(10)
        return Score(name="slow", value=1.0)

    with Recorder(sinks=[ParquetSink(tmp_path / "s")], evaluate=slow) as rec:
        started = time.monotonic()
        ids = _runs(rec, 2)
        took = time.monotonic() - started
        release.set()
    assert took < 5  # the judge waits up to 10 s per run: the runs never waited for it
    assert set(_scores(tmp_path / "s")) == set(ids)


def test_given_runs_judged_online_when_evaluate_runs_offline_then_none_is_judged_twice(
    tmp_path: Path,
) -> None:
    from recorder import evaluate

    with Recorder(sinks=[ParquetSink(tmp_path / "s")], evaluate=length) as rec:
        _runs(rec, 3)
    assert evaluate(tmp_path / "s", length) == []
    assert len(_scores(tmp_path / "s")) == 3


@pytest.mark.parametrize(("options", "needle"), [
    ({"evaluate": length, "sample": 0}, "sample=0: pass the fraction"),
    ({"evaluate": length, "sample": 1.5}, "sample=1.5: pass the fraction"),
    ({"evaluate": "length"}, "evaluate='length' is not a function"),
    ({"sample": 0.1}, r"sample=0.1\) without evaluate="),
])
def test_given_bad_online_options_when_a_recorder_is_built_then_a_config_error_names_them(
    tmp_path: Path, options: dict[str, object], needle: str,
) -> None:
    with pytest.raises(ConfigError, match=needle):
        Recorder(sinks=[ParquetSink(tmp_path / "s")], **options)  # type: ignore[arg-type]


def test_given_no_parquet_sink_when_evaluate_is_asked_then_the_error_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"add ParquetSink\(PATH\)"):
        Recorder(sinks=[], evaluate=length)


@given(st.text(min_size=1, max_size=40), st.floats(min_value=0.01, max_value=1.0))
def test_given_a_run_id_when_sampled_twice_or_at_a_higher_rate_then_it_stays_in(
    run_id: str, rate: float,
) -> None:
    if sampled(run_id, rate):
        assert sampled(run_id, rate) and sampled(run_id, min(1.0, rate * 2))
    assert sampled(run_id, 1.0)


def test_given_an_otel_sink_when_a_run_is_judged_online_then_its_result_joins_the_runs_trace(
    tmp_path: Path,
) -> None:
    from otlp_receiver import HttpReceiver

    from recorder.otel import OTelSink, otlp_exporter, trace_id_of

    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        with Recorder(sinks=[ParquetSink(tmp_path / "s"), sink], processors=[sink.stamp],
                      evaluate=length) as rec:
            (run_id,) = _runs(rec, 1)
        assert receiver.wait_for(lambda s: any(x.name == "gen_ai.evaluation.result"
                                               for x in s))
        spans = list(receiver.spans)
    root = next(s for s in spans if s.parent_id == "")
    (result,) = [s for s in spans if s.name == "gen_ai.evaluation.result"]
    assert result.trace_id == root.trace_id == f"{trace_id_of(run_id):032x}"
    assert result.parent_id == root.span_id
    assert (result.attributes["gen_ai.evaluation.name"],
            result.attributes["gen_ai.evaluation.score.value"]) == ("length", 8.0)
