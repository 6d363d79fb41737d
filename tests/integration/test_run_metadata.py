"""Run labels — user, session, tags, metadata per run; release and environment per
agent — recorded on ``run.start``, typed columns of the ``runs`` view, and
attributes of the run's root span."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from otlp_receiver import HttpReceiver

from footprint import ConfigError
from footprint.agent import Agent, StepClock
from footprint.events import ListSink, RunStart
from footprint.providers import ScriptedModel
from recorder import ParquetSink, Recorder, open_store
from recorder.otel import OTelSink, otlp_exporter


def _agent(sink: object, replies: int = 3, **options: object) -> Agent:
    return Agent(provider=ScriptedModel(["ok"] * replies), model="m", sink=sink,  # type: ignore[arg-type]
                 clock=StepClock(), **options)  # type: ignore[arg-type]


def test_given_labels_when_runs_are_recorded_then_sql_filters_runs_by_them(
    tmp_path: Path,
) -> None:
    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        agent = _agent(rec, release="1.4.2", environment="staging")
        mine = agent.run_sync("hi", user="u-1", session="s-9", tags=["beta", "eu"],
                              metadata={"ticket": "T-1", "priority": 2})
        agent.run_sync("hello", user="u-2")
    with open_store(tmp_path) as store:
        rows = store.rows(
            "SELECT run_id, session_id, tags, json_extract_string(metadata, '$.ticket'), "
            "CAST(json_extract(metadata, '$.priority') AS INTEGER), release, environment "
            "FROM runs WHERE user_id = ?", ["u-1"])
        tagged = store.rows("SELECT count(*) FROM runs WHERE list_contains(tags, 'beta')")
        unlabelled = store.rows("SELECT tags, session_id FROM runs WHERE user_id = 'u-2'")
    assert rows == [(mine.run_id, "s-9", ["beta", "eu"], "T-1", 2, "1.4.2", "staging")]
    assert tagged == [(1,)]
    assert unlabelled == [([], None)]


def test_given_labels_when_traced_then_the_root_span_carries_them(tmp_path: Path) -> None:
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        with Recorder(sinks=[sink], processors=[sink.stamp]) as rec:
            _agent(rec, release="2.0.0", environment="prod").run_sync(
                "hi", user="u-7", session="chat-1", tags=["vip"], metadata={"plan": "gold"})
        assert receiver.wait_for(lambda s: any(x.parent_id == "" for x in s))
    root = next(s for s in receiver.spans if s.parent_id == "")
    a = root.attributes
    assert a["gen_ai.conversation.id"] == "chat-1"
    assert a["user.id"] == "u-7"
    assert a["deployment.environment.name"] == a["deployment.environment"] == "prod"
    assert a["service.version"] == "2.0.0"
    assert a["footprint.tags"] == ("vip",)
    assert a["footprint.metadata.plan"] == "gold"
    assert a["footprint.conversation.id"]


def test_given_a_follow_up_without_labels_when_run_then_it_keeps_the_first_turns_labels() -> None:
    sink = ListSink()
    agent = _agent(sink)
    agent.run_sync("hi", user="u-1", session="s-1", tags=["a"])
    agent.follow_up_sync("and then?")
    agent.follow_up_sync("last", tags=["b"])
    starts = [e for e in sink.events if isinstance(e, RunStart)]
    assert [(e.user_id, e.session_id, e.tags) for e in starts] == [
        ("u-1", "s-1", ("a",)), ("u-1", "s-1", ("a",)), ("u-1", "s-1", ("b",))]


@pytest.mark.parametrize(("call", "needle"), [
    (lambda a: a.run_sync("hi", tags="beta"), "tags='beta' must be a list of strings"),
    (lambda a: a.run_sync("hi", tags=["ok", ""]), "every tag must be a non-empty string"),
    (lambda a: a.run_sync("hi", user=5), "user=5 must be a non-empty string"),
    (lambda a: a.run_sync("hi", session=""), "session='' must be a non-empty string"),
    (lambda a: a.run_sync("hi", metadata=["x"]), "metadata=['x'] must be a dict"),
    (lambda a: a.run_sync("hi", metadata={"when": object()}), "metadata['when']="),
    (lambda a: a.run_sync("hi", metadata={1: "x"}), "metadata key 1 must be"),
])
def test_given_a_bad_label_when_run_then_a_one_line_config_error_names_the_fix(
    call: Callable[[Agent], object], needle: str,
) -> None:
    with pytest.raises(ConfigError) as caught:
        call(_agent(ListSink()))
    assert needle in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("options", [{"release": ""}, {"environment": 3}])
def test_given_a_bad_deployment_label_when_built_then_it_is_refused(
    options: dict[str, object],
) -> None:
    with pytest.raises(ConfigError, match="must be a non-empty string"):
        _agent(ListSink(), **options)
