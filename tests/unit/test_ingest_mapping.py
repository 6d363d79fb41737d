"""The intake's decoders and mapper, without a receiver: OTLP/JSON and protobuf decode to the
same spans, the three dialects map to the same request, and what a trace lost is flagged."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st
from otlp_build import agent_trace, logs_request, to_json, trace_request

from footprint.events import (
    ContextInjected,
    EventBase,
    LLMEnd,
    LLMStart,
    RunEnd,
    RunFailed,
    RunSource,
    ToolEnd,
)
from recorder.ingest import decode_json, decode_logs, decode_traces, map_trace, run_id_for

_ids = st.integers(min_value=1, max_value=(1 << 64) - 1)
_attr = st.one_of(st.text(max_size=20), st.integers(-(1 << 63), (1 << 63) - 1), st.booleans(),
                  st.floats(allow_nan=False), st.lists(st.text(max_size=5), max_size=3))


@given(st.lists(st.tuples(st.integers(1, (1 << 128) - 1), _ids, st.text(max_size=20),
                          st.dictionaries(st.text(min_size=1, max_size=10), _attr, max_size=4)),
                min_size=1, max_size=5))
def test_given_any_spans_when_decoded_from_json_and_from_protobuf_then_both_agree(
        specs: list[tuple[int, int, str, dict[str, object]]]) -> None:
    request = trace_request([{"trace_id": f"{t:032x}", "span_id": f"{s:016x}", "name": n,
                              "attributes": a, "start": 5, "end": 9} for t, s, n, a in specs])
    from_proto = decode_traces(request.SerializeToString())
    from_json = decode_json(json.loads(to_json(request)))
    assert from_json == from_proto
    assert [s.trace_id for s in from_json.spans] == [f"{t:032x}" for t, _, _, _ in specs]


def _map(spans: list[dict[str, object]], logs: object = None) -> list[EventBase]:
    batch = decode_traces(trace_request(spans).SerializeToString())
    log_batch = decode_logs(logs.SerializeToString()) if logs is not None else None
    run = map_trace(batch.spans, log_batch.logs if log_batch else ())
    assert run is not None
    return list(run.events)


def _request(events: list[EventBase], step: str) -> dict[str, object]:
    start = next(e for e in events if isinstance(e, LLMStart) and e.step_id == step)
    assert start.request_ref is not None
    return dict(json.loads(start.request_ref))


def test_given_the_three_dialects_when_mapped_then_each_call_is_the_same_request() -> None:
    mapped = {d: _map(agent_trace(7, calls=3, dialect=d))
              for d in ("otel-genai", "openinference", "legacy-indexed")}
    shapes = {}
    for dialect, events in mapped.items():
        request = _request(events, "llm#3")
        shapes[dialect] = (request["system"], [(m["role"], m.get("tool_call_id"))
                                               for m in request["messages"]])
        usage = [(e.input_tokens, e.output_tokens) for e in events if isinstance(e, LLMEnd)]
        assert usage == [(10, 3), (20, 3), (30, 3)], dialect
        assert next(e for e in events if isinstance(e, RunEnd)).final_content == "APPROVED"
        assert next(e for e in events if isinstance(e, RunSource)).dialect == dialect
    assert len(set(map(repr, shapes.values()))) == 1, shapes
    assert shapes["otel-genai"][1] == [("user", None), ("assistant", None), ("tool", "call_1"),
                                       ("assistant", None), ("tool", "call_2")]


def test_given_a_tool_result_when_mapped_then_its_piece_names_the_call_that_produced_it() -> None:
    events = _map(agent_trace(8, calls=2))
    pieces = [(e.injection_id, e.as_role) for e in events
              if isinstance(e, ContextInjected) and e.iteration == 2 and e.slot == "messages"]
    assert pieces == [("person", "user"), ("llm#1", "assistant"), ("tool#call_1", "tool")]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [(e.tool_call_id, e.result) for e in ends] == [("call_1", '{"amount": 1}')]


def test_given_flattened_messages_cut_at_the_sdk_limit_when_mapped_then_the_run_flags_them(
) -> None:
    spans = agent_trace(9, calls=3, dialect="openinference")
    chat = spans[-2]
    attrs = dict(chat["attributes"])  # type: ignore[arg-type]
    for key in [k for k in attrs if k.startswith("llm.input_messages.1.")]:
        del attrs[key]
    chat.update(attributes=attrs, dropped=6)  # type: ignore[attr-defined]
    source = next(e for e in _map(spans) if isinstance(e, RunSource))
    assert any("dropped 6 attributes" in f for f in source.flagged)
    assert any("input messages [1] missing" in f for f in source.flagged)


def test_given_a_truncation_mark_when_mapped_then_the_piece_is_flagged_truncated() -> None:
    spans = agent_trace(11, calls=1)
    attrs = dict(spans[0]["attributes"])  # type: ignore[arg-type]
    attrs["gen_ai.input.messages"] = json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "long text …[truncated]"}]}])
    spans[0]["attributes"] = attrs
    events = _map(spans)
    piece = next(e for e in events if isinstance(e, ContextInjected) and e.slot == "messages")
    assert piece.reason.endswith("TRUNCATED by the emitter")
    source = next(e for e in events if isinstance(e, RunSource))
    assert source.flagged == ("llm#1: a user message truncated by the emitter",)


def test_given_content_sent_as_log_records_when_mapped_then_the_messages_come_from_them() -> None:
    spans = agent_trace(12, calls=1)
    chat = spans[0]
    chat["attributes"] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                          "gen_ai.usage.input_tokens": 5}
    logs = logs_request([
        {"trace_id": chat["trace_id"], "span_id": chat["span_id"],
         "event_name": "gen_ai.system.message", "body": {"content": "Be brief."}},
        {"trace_id": chat["trace_id"], "span_id": chat["span_id"],
         "event_name": "gen_ai.user.message", "body": {"content": "refund?"}},
        {"trace_id": chat["trace_id"], "span_id": chat["span_id"], "event_name": "gen_ai.choice",
         "body": {"finish_reason": "stop", "message": {"content": "No."}}},
    ])
    events = _map(spans, logs)
    request = _request(events, "llm#1")
    assert request["system"] == "Be brief."
    assert [m["role"] for m in request["messages"]] == ["user"]  # type: ignore[union-attr]
    assert next(e for e in events if isinstance(e, RunEnd)).final_content == "No."


def test_given_a_chat_span_without_content_when_mapped_then_the_run_is_usage_only() -> None:
    spans = agent_trace(13, calls=1)
    spans[0]["attributes"] = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5}
    events = _map(spans)
    source = next(e for e in events if isinstance(e, RunSource))
    assert source.fidelity == "usage-only"
    assert next(e for e in events if isinstance(e, LLMStart)).request_ref is None


def test_given_a_failed_root_span_when_mapped_then_the_run_ends_with_run_error() -> None:
    spans = agent_trace(14, calls=2)
    spans[-1].update(status=2, message="model overloaded")
    failed = [e for e in _map(spans) if isinstance(e, RunFailed)]
    assert [(f.stage, f.message) for f in failed] == [("agent", "model overloaded")]


def test_given_a_trace_when_its_run_id_is_made_twice_then_it_is_the_same_time_sortable_id() -> None:
    a, b = run_id_for("ab" * 16, 2_000_000_000), run_id_for("ab" * 16, 2_000_000_000)
    later = run_id_for("cd" * 16, 3_000_000_000)
    assert a == b and a < later and a[14] == "7"


def test_given_a_retriever_span_when_mapped_then_its_documents_are_rag_pieces_of_the_next_call(
) -> None:
    spans = agent_trace(15, calls=2)
    chat = spans[0]
    spans.insert(0, {"trace_id": chat["trace_id"], "span_id": f"{15_999:016x}",
                     "parent_id": chat["parent_id"], "name": "retrieve", "start": 1,
                     "end": 2, "attributes": {
                         "openinference.span.kind": "RETRIEVER",
                         "retrieval.documents.0.document.id": "memo-7",
                         "retrieval.documents.0.document.content": "Refunds: 60 days.",
                         "retrieval.documents.0.document.score": 0.9}})
    docs = [e for e in _map(spans) if isinstance(e, ContextInjected) and e.source == "rag"]
    assert [(d.injection_id, d.iteration, d.admitted_via, d.retrieval_score)
            for d in docs] == [("doc:memo-7", 1, "retrieval", 0.9)]


def test_given_failed_model_and_tool_spans_when_mapped_then_they_are_failed_calls() -> None:
    spans = agent_trace(16, calls=2)
    spans[0].update(status=2, message="rate limited")  # the first chat call
    spans[1].update(status=2, message="order service down")  # its tool call
    events = _map(spans)
    first = next(e for e in events if isinstance(e, LLMEnd))
    assert first.stop_reason == "error"
    tool = next(e for e in events if isinstance(e, ToolEnd))
    assert (tool.error, tool.status, tool.result) == (True, "failure", '{"amount": 1}')


def test_given_ids_in_base64_as_protobufs_json_mapping_writes_them_when_decoded_then_they_are_read(
        ) -> None:
    request = trace_request(agent_trace(12, calls=1))
    doc = json.loads(to_json(request))
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if span[key]:
                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    assert decode_json(doc) == decode_traces(request.SerializeToString())
