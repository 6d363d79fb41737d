"""A real ``Agent`` run with a ``ScriptedModel``, recorded to Parquet and mirrored over OTLP."""

from __future__ import annotations

from pathlib import Path

from otlp_receiver import HttpReceiver

from footprint.agent import Agent, StepClock, tool
from footprint.injection import define_instruction, define_steering
from footprint.providers import ScriptedModel, call
from recorder import ParquetSink, Recorder, open_store
from recorder.otel import OTelSink, otlp_exporter, trace_id_of


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def test_given_a_real_agent_run_when_recorded_then_backend_and_store_name_the_same_spans(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([call("lookup", city="Oslo"), "It is sunny in Oslo."])
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        with Recorder(sinks=[ParquetSink(tmp_path), sink], processors=[sink.stamp]) as rec:
            agent = Agent(provider=model, model="m-small", tools=[tool(lookup)], sink=rec,
                          name="weather", clock=StepClock(),
                          injections=[define_steering("tone", "Be brief."),
                                      define_instruction("units", "Use metric units.")])
            result = agent.run_sync("What is the weather in Oslo?")
        assert receiver.wait_for(lambda s: any(x.parent_id == "" for x in s))
    spans = {s.span_id: s for s in receiver.spans}
    root = next(s for s in spans.values() if s.parent_id == "")
    assert root.name == "invoke_agent weather"
    assert root.trace_id == f"{trace_id_of(result.run_id):032x}"
    assert root.attributes["gen_ai.usage.input_tokens"] == result.input_tokens
    chats = [s for s in spans.values() if s.name == "chat m-small"]
    tools = [s for s in spans.values() if s.name == "execute_tool lookup"]
    assert len(chats) == result.iterations == 2 and len(tools) == 1
    assert all(spans[c.parent_id].name == "footprint.iteration" for c in chats + tools)
    assert all(spans[spans[c.parent_id].parent_id] is root for c in chats + tools)
    with open_store(tmp_path) as store:
        rows = store.rows("SELECT type, trace_id, span_id, ts FROM events WHERE run_id = ?",
                          [result.run_id])
        decisions = store.rows("SELECT count(*) FROM decisions WHERE run_id = ?",
                               [result.run_id])[0][0]
        injected = store.rows("SELECT count(*) FROM injections WHERE run_id = ?",
                              [result.run_id])[0][0]
    assert {r[1] for r in rows} == {root.trace_id}
    assert all(spans[r[2]].start_ns <= r[3] <= spans[r[2]].end_ns for r in rows)
    exported = sum(1 for s in spans.values() for e in s.events
                   if e[0] != "footprint.skill.graph_declared")
    assert exported == decisions + injected
    assert "Oslo" not in repr([(s.attributes, s.events) for s in spans.values()])
