"""End to end: recorder -> OTelSink -> the real SDK OTLP exporters -> a receiver on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from otel_runs import SECRET, scripted_run
from otlp_receiver import GrpcReceiver, HttpReceiver, ReceivedSpan

from footprint.events import EventBase
from recorder import ParquetSink, Recorder, Redactor, open_store
from recorder.otel import OTelSink, otlp_exporter, trace_id_of

DECISIONS = {"context.evaluated", "context.injected", "route.decided", "tool.effect",
             "skill.activated"}


def _record(events: list[EventBase], sink: OTelSink, store: Path | None = None,
            processors: tuple[Any, ...] = ()) -> Recorder:
    sinks: list[object] = [ParquetSink(store)] if store is not None else []
    rec = Recorder(sinks=[*sinks, sink], processors=[*processors, sink.stamp])
    for event in events:
        rec.emit(event)
    rec.close()
    return rec


@pytest.fixture(params=["http", "http-gzip", "grpc"])
def transport(request: pytest.FixtureRequest) -> Iterator[tuple[Any, OTelSink]]:
    kind = request.param
    receiver = GrpcReceiver() if kind == "grpc" else HttpReceiver()
    with receiver:
        exporter = otlp_exporter("grpc" if kind == "grpc" else "http/protobuf",
                                 receiver.endpoint,
                                 compression="gzip" if kind == "http-gzip" else None)
        yield receiver, OTelSink(exporter=exporter, schedule_delay_s=0.05, capture_content=False)
        if kind != "grpc":
            assert (receiver.gzipped > 0) == (kind == "http-gzip")


def _by_name(spans: list[ReceivedSpan]) -> dict[str, list[ReceivedSpan]]:
    out: dict[str, list[ReceivedSpan]] = {}
    for s in spans:
        out.setdefault(s.name, []).append(s)
    return out


def test_given_a_recorded_run_when_exported_over_each_transport_then_the_span_tree_is_genai(
    transport: tuple[Any, OTelSink],
) -> None:
    receiver, sink = transport
    events = scripted_run(iterations=2, tools=1)
    _record(events, sink)
    assert receiver.wait_for(lambda s: len(s) == 6)
    names = _by_name(receiver.spans)
    root = names["invoke_agent support"][0]
    iterations = names["footprint.iteration"]
    chats, tools = names["chat m-large"], names["execute_tool lookup0"]
    assert (len(iterations), len(chats), len(tools)) == (2, 2, 1)
    assert root.parent_id == "" and root.kind == "internal"
    assert root.trace_id == f"{trace_id_of('run-otel-1'):032x}"
    assert {s.trace_id for s in receiver.spans} == {root.trace_id}
    assert {s.parent_id for s in iterations} == {root.span_id}
    parents = {s.attributes["footprint.iteration"]: s.span_id for s in iterations}
    assert [c.parent_id for c in sorted(chats, key=lambda c: c.start_ns)] == [parents[1],
                                                                               parents[2]]
    assert tools[0].parent_id == parents[1]
    assert {c.kind for c in chats} == {"client"} and tools[0].kind == "internal"
    assert root.attributes == root.attributes | {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support",
        "gen_ai.conversation.id": "conv-7", "footprint.run.id": "run-otel-1",
        "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 10,
        "gen_ai.usage.cache_read.input_tokens": 8,
    }
    first = min(chats, key=lambda c: c.start_ns)
    assert first.attributes == first.attributes | {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "m-large", "gen_ai.response.model": "m-large-001",
        "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5,
        "gen_ai.usage.cache_read.input_tokens": 4,
        "gen_ai.response.finish_reasons": ("tool_call",),
    }
    assert max(chats, key=lambda c: c.start_ns).attributes["footprint.brain.via"] == "skill"
    assert tools[0].attributes == tools[0].attributes | {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup0",
        "gen_ai.tool.call.id": "c1_0"}
    assert tools[0].status == "unset"


def test_given_a_recorded_run_when_exported_then_each_decision_is_one_span_event(
    transport: tuple[Any, OTelSink],
) -> None:
    receiver, sink = transport
    events = scripted_run(iterations=3, tools=1)
    _record(events, sink)
    assert receiver.wait_for(lambda s: len(s) == 9)
    got = sorted((e[0], e[1]) for s in receiver.spans for e in s.events)
    want = sorted(("footprint." + e.type, e.ts) for e in events  # type: ignore[attr-defined]
                  if getattr(e, "type", "") in DECISIONS)
    assert got == want
    iteration2 = next(s for s in receiver.spans if s.attributes.get("footprint.iteration") == 2)
    by_name = {name: attrs for name, _, attrs in iteration2.events}
    assert by_name["footprint.context.evaluated"] == {
        "footprint.active.ids": ("steer", "triage"),
        "footprint.cursor.by": "route", "footprint.cursor.from": "triage",
        "footprint.cursor.to": "billing", "footprint.guard.verdict": True,
    }
    assert by_name["footprint.route.decided"] == {"footprint.route.chosen": "tool-calls"}
    assert by_name["footprint.tool.effect"]["footprint.effect.outcome"] == "accepted"
    injected = [a for n, _, a in iteration2.events if n == "footprint.context.injected"]
    assert injected[1] == {"footprint.injection.id": "triage", "footprint.slot": "system-prompt",
                           "footprint.content.hash": f"{1:064x}",
                           "footprint.admitted.via": "cursor", "footprint.position": 1}


def _everything(spans: list[ReceivedSpan]) -> str:
    return repr([(s.name, s.attributes, s.events, s.status_message) for s in spans])


def test_given_content_capture_off_when_exported_then_no_message_text_leaves(
    transport: tuple[Any, OTelSink],
) -> None:
    receiver, sink = transport
    _record(scripted_run(iterations=2, tools=1), sink)
    assert receiver.wait_for(lambda s: len(s) == 6)
    assert SECRET not in _everything(receiver.spans)
    assert not any(k.startswith("gen_ai.input") or k.endswith("arguments")
                   for s in receiver.spans for k in s.attributes)


def test_given_content_opted_in_by_env_when_exported_then_messages_arrive_redacted_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        _record(scripted_run(iterations=2, tools=1), sink,
                processors=(Redactor(patterns=[r"hunter\d"]),))
        assert receiver.wait_for(lambda s: len(s) == 6)
    root = next(s for s in receiver.spans if s.parent_id == "")
    tool = next(s for s in receiver.spans if s.name.startswith("execute_tool"))
    mark = Redactor().marker("hunter2")  # the Redactor's own function made what the span shows
    assert f"hello SECRET-{mark}" in root.attributes["gen_ai.input.messages"]
    assert "answer SECRET-[redacted" in root.attributes["gen_ai.output.messages"]
    assert tool.attributes["gen_ai.tool.call.result"].startswith("result SECRET-[redacted")
    assert "hunter2" not in _everything(receiver.spans)


def test_given_a_store_and_stamping_when_recorded_then_parquet_events_carry_the_span_ids(
    tmp_path: Path,
) -> None:
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        _record(scripted_run(iterations=2, tools=1), sink, store=tmp_path)
        assert receiver.wait_for(lambda s: len(s) == 6)
    spans = {s.span_id: s for s in receiver.spans}
    with open_store(tmp_path) as store:
        rows = store.rows("SELECT type, trace_id, span_id, ts FROM events ORDER BY seq")
    assert {r[1] for r in rows} == {next(iter(spans.values())).trace_id}
    for tag, _, span_id, ts in rows:
        span = spans[span_id]
        assert span.start_ns <= ts <= span.end_ns
        if tag in DECISIONS:
            assert ("footprint." + tag, ts) in [(n, t) for n, t, _ in span.events]


def test_given_a_failing_tool_when_exported_then_its_span_has_error_status() -> None:
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        _record(scripted_run(iterations=2, tools=2, failing_tool=True), sink)
        assert receiver.wait_for(lambda s: len(s) == 7)
    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in receiver.spans
             if s.name.startswith("execute_tool")}
    assert (tools["c1_0"].status, tools["c1_0"].attributes["error.type"]) == ("error", "failure")
    assert tools["c1_1"].status == "unset" and "error.type" not in tools["c1_1"].attributes
