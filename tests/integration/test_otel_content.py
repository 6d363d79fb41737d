"""What the model saw, on the trace: a real agent run mirrored to a loopback OTLP
receiver with content capture on. Chat spans carry the system prompt, the input
messages (tool calls and tool results as parts) and the output, in the GenAI
conventions' shapes, after redaction and within the size bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otlp_receiver import HttpReceiver, ReceivedSpan

from footprint.agent import Agent, StepClock, tool
from footprint.injection import define_fact, define_steering
from footprint.providers import ScriptedModel, call
from recorder import ParquetSink, Recorder, Redactor
from recorder.otel import OTelSink, otlp_exporter

SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUV0123"


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}; vault code hunter7"


def _run(tmp_path: Path, **sink_options: Any) -> list[ReceivedSpan]:
    model = ScriptedModel([call("lookup", city="Oslo"), "It is sunny in Oslo."])
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05, capture_content=True, **sink_options)
        redact = Redactor(paths=["tool.end:result"], patterns=[r"sk-proj-[A-Za-z0-9]{16,}"])
        with Recorder(sinks=[ParquetSink(tmp_path), sink],
                      processors=[redact, sink.stamp]) as rec:
            agent = Agent(provider=model, model="m-small", tools=[tool(lookup)], sink=rec,
                          name="weather", clock=StepClock(),
                          system_prompt=f"You are a weather bot. Key {SECRET}.",
                          injections=[define_steering("tone", "Be brief."),
                                      define_fact("units", "Use metric units.")])
            agent.run_sync("What is the weather in Oslo?")
        assert receiver.wait_for(lambda s: any(x.parent_id == "" for x in s))
    return receiver.spans


def _chats(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
    return sorted((s for s in spans if s.name == "chat m-small"), key=lambda s: s.start_ns)


def test_given_content_capture_when_an_agent_runs_then_chat_spans_show_what_the_model_saw(
    tmp_path: Path,
) -> None:
    first, second = _chats(_run(tmp_path))
    system = json.loads(first.attributes["gen_ai.system_instructions"])
    assert system[0]["type"] == "text"
    assert "You are a weather bot." in system[0]["content"]
    assert "Be brief." in system[0]["content"] and "Use metric units." in system[0]["content"]
    inputs = json.loads(second.attributes["gen_ai.input.messages"])
    assert [m["role"] for m in inputs] == ["user", "assistant", "tool"]
    assert inputs[0]["parts"] == [{"type": "text", "content": "What is the weather in Oslo?"}]
    call_part = inputs[1]["parts"][-1]
    assert (call_part["type"], call_part["name"], call_part["arguments"]) == (
        "tool_call", "lookup", {"city": "Oslo"})
    response = inputs[2]["parts"][0]
    assert response["type"] == "tool_call_response" and response["id"] == call_part["id"]
    output = json.loads(second.attributes["gen_ai.output.messages"])
    assert output == [{"role": "assistant", "finish_reason": "stop",
                       "parts": [{"type": "text", "content": "It is sunny in Oslo."}]}]
    first_out = json.loads(first.attributes["gen_ai.output.messages"])
    assert first_out[0]["finish_reason"] == "tool_call"


def test_given_redaction_when_content_is_captured_then_no_secret_reaches_the_trace(
    tmp_path: Path,
) -> None:
    spans = _run(tmp_path, openinference=True)
    everything = repr([(s.attributes, s.events) for s in spans])
    assert SECRET not in everything
    assert "hunter7" not in everything  # redacted by path on tool.end, also inside the prompt
    second = _chats(spans)[1]
    tool_part = json.loads(second.attributes["gen_ai.input.messages"])[2]["parts"][0]
    assert tool_part["response"].startswith(f"[redacted hmac-sha256:{Redactor().key_id}:")


def test_given_a_small_content_limit_when_captured_then_texts_are_cut_and_marked(
    tmp_path: Path,
) -> None:
    second = _chats(_run(tmp_path, content_limit=120))[1]
    for key in ("gen_ai.system_instructions", "gen_ai.input.messages"):
        assert len(second.attributes[key]) <= 120
        json.loads(second.attributes[key])
    assert second.attributes["footprint.content.truncated"] is True
    assert second.attributes["footprint.content.omitted_messages"] >= 1


def test_given_injections_when_traced_then_each_piece_is_attributable_by_id_slot_and_position(
    tmp_path: Path,
) -> None:
    spans = _run(tmp_path)
    injected = [attrs for s in spans for name, _, attrs in s.events
                if name == "footprint.context.injected"]
    ids = {a["footprint.injection.id"] for a in injected}
    assert {"tone", "units"} <= ids
    for a in injected:
        assert {"footprint.slot", "footprint.position", "footprint.content.hash"} <= set(a)
        assert len(a["footprint.content.hash"]) == 64


def test_given_openinference_when_traced_then_phoenix_attributes_sit_beside_genai(
    tmp_path: Path,
) -> None:
    spans = _run(tmp_path, openinference=True)
    kinds = {s.name.split(" ")[0]: s.attributes.get("openinference.span.kind") for s in spans}
    assert kinds == {"invoke_agent": "AGENT", "footprint.iteration": "CHAIN", "chat": "LLM",
                     "execute_tool": "TOOL"}
    second = _chats(spans)[1]
    a = second.attributes
    assert a["llm.model_name"] == "m-small"
    assert a["llm.input_messages.0.message.role"] == "system"
    assert a["llm.input_messages.1.message.content"] == "What is the weather in Oslo?"
    assert a["llm.input_messages.2.message.tool_calls.0.tool_call.function.name"] == "lookup"
    assert a["llm.output_messages.0.message.content"] == "It is sunny in Oslo."
    assert a["llm.token_count.total"] == (
        a["gen_ai.usage.input_tokens"] + a["gen_ai.usage.output_tokens"])
    assert "gen_ai.input.messages" in a
