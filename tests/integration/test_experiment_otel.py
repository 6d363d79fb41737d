"""An experiment's results to OpenTelemetry: ``footprint experiment export-otlp NAME``
sends one ``gen_ai.evaluation.result`` span per result (the GenAI conventions'
attributes, the event of the same name) into the trace of the run it evaluates,
under that run's root span, to a real OTLP/HTTP receiver on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from otlp_receiver import HttpReceiver, down_endpoint

from footprint import Agent, ScriptedModel
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder
from recorder._experiments import ExperimentMeta, ExperimentResult, save_experiment

VERDICTS = [(True, "holds 'refund'", None), (False, "lacks 'refund'", None),
            (None, "nothing to compare", None), (False, "the run failed", "RunError: boom")]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with four runs and experiment ``changed`` over them (pass, fail, nothing to
    pass, a failed run) and a fifth item whose run never started."""
    store = tmp_path_factory.mktemp("experiment") / "store"
    with Recorder(sinks=[ParquetSink(store)]) as rec:
        ids = [Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec)
               .run_sync("hi").run_id for i in range(len(VERDICTS))]
    results = [ExperimentResult(item_id=f"i{k}", repeat=0, run_id=run_id, answer="a",
                                verdict=verdict, passed=passed, cost_usd=None,
                                latency_ms=1.0, error=error)
               for k, (run_id, (passed, verdict, error))
               in enumerate(zip(ids, VERDICTS, strict=True))]
    results.append(ExperimentResult(item_id="never", repeat=0, run_id=None, answer=None,
                                    verdict="not started", passed=None, cost_usd=None,
                                    latency_ms=0.0, error="RunError: no agent"))
    meta = ExperimentMeta(name="changed", dataset="helpdesk", version=1, agent="a.py:f",
                          comparator="expect:refund")
    save_experiment(store, meta, results)
    return store


def test_given_an_experiment_when_exported_then_each_result_joins_its_runs_trace_as_a_result(
    ran: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from recorder._experiments import load_experiment

    results = load_experiment(ran, "changed").results
    one = results[0].run_id
    assert one is not None
    with HttpReceiver() as receiver:
        assert footprint(["experiment", "export-otlp", "changed", "--endpoint",
                          receiver.endpoint, "--store", str(ran)]) == 0
        assert footprint(["export-otlp", one, "--endpoint", receiver.endpoint,
                          "--store", str(ran)]) == 0
        spans = list(receiver.spans)
    out = capsys.readouterr().out
    assert "exported experiment changed: 4 gen_ai.evaluation.result spans in the traces " \
           "of 4 runs (1 results without a run left out)" in out
    found = [s for s in spans if s.name == "gen_ai.evaluation.result"]
    by_run = {s.attributes["footprint.run.id"]: s for s in found}
    assert list(by_run) == [r.run_id for r in results if r.run_id]
    keys = ("gen_ai.evaluation.name", "gen_ai.evaluation.score.value",
            "gen_ai.evaluation.score.label", "gen_ai.evaluation.explanation", "error.type")
    assert [tuple(s.events[0][2].get(k) for k in keys) for s in found] == [
        ("expect", 1.0, "pass", "holds 'refund'", None),
        ("expect", 0.0, "fail", "lacks 'refund'", None),
        ("expect", None, None, "nothing to compare", None),
        ("expect", 0.0, "fail", "RunError: boom", "_OTHER")]
    assert all(s.events[0][0] == "gen_ai.evaluation.result" and s.attributes[
        "footprint.experiment.item_id"] == f"i{k}" for k, s in enumerate(found))
    (root,) = [s for s in spans if s.trace_id == by_run[one].trace_id and not s.parent_id]
    assert root.name.startswith("invoke_agent") and by_run[one].parent_id == root.span_id


def test_given_a_collector_that_is_down_when_an_experiment_is_exported_then_it_says_so(
    ran: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code = footprint(["experiment", "export-otlp", "changed", "--endpoint", down_endpoint(),
                      "--timeout", "1", "--store", str(ran)])
    err = capsys.readouterr().err
    assert code != 0 and "did not take 4 of 4 evaluation spans" in err, err
