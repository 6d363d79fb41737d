"""Build OTLP trace and log requests for the intake tests: protobuf messages, and the same
request as OTLP/JSON (ids as hex, 64-bit integers as strings), written independently of
the decoder under test."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = ["SpanSpec", "agent_trace", "conversation_turn", "logs_request", "to_json",
           "trace_request"]

SpanSpec = Mapping[str, Any]
"""``trace_id`` (32 hex), ``span_id`` (16 hex), ``parent_id``, ``name``, ``start``, ``end``,
``attributes`` (dict), ``status`` (0/1/2), ``message``, ``dropped``."""


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list):
        out = AnyValue()
        out.array_value.values.extend(any_value(v) for v in value)
        return out
    return AnyValue(string_value=str(value))


def _kvs(attrs: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in attrs.items()]


def trace_request(spans: Sequence[SpanSpec],
                  scope: str = "test-scope") -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend(_kvs({"service.name": "agent"}))
    ss = rs.scope_spans.add()
    ss.scope.name = scope
    for spec in spans:
        span = ss.spans.add()
        span.trace_id = bytes.fromhex(spec["trace_id"])
        span.span_id = bytes.fromhex(spec["span_id"])
        if spec.get("parent_id"):
            span.parent_span_id = bytes.fromhex(spec["parent_id"])
        span.name = spec.get("name", "span")
        span.start_time_unix_nano = spec.get("start", 1)
        span.end_time_unix_nano = spec.get("end", 2)
        span.attributes.extend(_kvs(spec.get("attributes", {})))
        span.status.code = spec.get("status", 0)
        span.status.message = spec.get("message", "")
        span.dropped_attributes_count = spec.get("dropped", 0)
    return request


def logs_request(records: Sequence[Mapping[str, Any]]) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    sl = request.resource_logs.add().scope_logs.add()
    for spec in records:
        rec = sl.log_records.add()
        rec.trace_id = bytes.fromhex(spec["trace_id"])
        rec.span_id = bytes.fromhex(spec["span_id"])
        rec.event_name = spec["event_name"]
        rec.body.CopyFrom(_json_any(spec.get("body")))
        rec.attributes.extend(_kvs(spec.get("attributes", {})))
    return request


def _json_any(value: Any) -> AnyValue:
    if isinstance(value, Mapping):
        out = AnyValue()
        out.kvlist_value.values.extend(KeyValue(key=k, value=_json_any(v))
                                       for k, v in value.items())
        return out
    if isinstance(value, list):
        out = AnyValue()
        out.array_value.values.extend(_json_any(v) for v in value)
        return out
    return any_value(value) if value is not None else AnyValue()


def _value_json(v: AnyValue) -> dict[str, Any]:
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return {"stringValue": v.string_value}
    if kind == "bool_value":
        return {"boolValue": v.bool_value}
    if kind == "int_value":
        return {"intValue": str(v.int_value)}
    if kind == "double_value":
        return {"doubleValue": v.double_value}
    if kind == "array_value":
        return {"arrayValue": {"values": [_value_json(x) for x in v.array_value.values]}}
    if kind == "kvlist_value":
        return {"kvlistValue": {"values": _kvs_json(v.kvlist_value.values)}}
    return {}


def _kvs_json(kvs: Any) -> list[dict[str, Any]]:
    return [{"key": kv.key, "value": _value_json(kv.value)} for kv in kvs]


def to_json(request: ExportTraceServiceRequest) -> bytes:
    """The request as OTLP/JSON (what an OTLP/JSON exporter or the Collector writes)."""
    resource_spans = []
    for rs in request.resource_spans:
        scopes = []
        for ss in rs.scope_spans:
            spans = [{
                "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(),
                "parentSpanId": s.parent_span_id.hex(), "name": s.name, "kind": 1,
                "startTimeUnixNano": str(s.start_time_unix_nano),
                "endTimeUnixNano": str(s.end_time_unix_nano),
                "attributes": _kvs_json(s.attributes),
                "droppedAttributesCount": s.dropped_attributes_count,
                "status": {"code": s.status.code, "message": s.status.message},
            } for s in ss.spans]
            scopes.append({"scope": {"name": ss.scope.name}, "spans": spans})
        resource_spans.append({"resource": {"attributes": _kvs_json(rs.resource.attributes)},
                               "scopeSpans": scopes})
    return json.dumps({"resourceSpans": resource_spans}).encode()


def _hex(n: int, width: int) -> str:
    return f"{n:0{width}x}"


def _chat_attrs(dialect: str, k: int, system: str, final: bool) -> dict[str, Any]:
    """Call ``k`` (1-based) of a tool loop: user, then (assistant call, tool result) pairs."""
    msgs: list[dict[str, Any]] = [{"role": "user", "text": "refund A-1?"}]
    for j in range(1, k):
        msgs += [{"role": "assistant", "call": f"call_{j}"},
                 {"role": "tool", "call": f"call_{j}", "text": f'{{"amount": {j}}}'}]
    if dialect == "otel-genai":
        def parts(m: dict[str, Any]) -> list[dict[str, Any]]:
            if m["role"] == "assistant":
                return [{"type": "tool_call", "id": m["call"], "name": "lookup",
                         "arguments": {"order_id": "A-1"}}]
            if m["role"] == "tool":
                return [{"type": "tool_call_response", "id": m["call"], "response": m["text"]}]
            return [{"type": "text", "content": m["text"]}]
        out_parts = ([{"type": "text", "content": "APPROVED"}] if final else
                     [{"type": "tool_call", "id": f"call_{k}", "name": "lookup",
                       "arguments": {"order_id": "A-1"}}])
        return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                "gen_ai.provider.name": "p",
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": system}]),
                "gen_ai.input.messages": json.dumps([{"role": m["role"], "parts": parts(m)}
                                                     for m in msgs]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": out_parts,
                                                       "finish_reason": "stop"}]),
                "gen_ai.tool.definitions": json.dumps([{"type": "function", "name": "lookup",
                                                        "description": "Look up."}]),
                "gen_ai.usage.input_tokens": 10 * k, "gen_ai.usage.output_tokens": 3}
    prefix, out = ("llm.input_messages", "llm.output_messages") if dialect == "openinference" \
        else ("gen_ai.prompt", "gen_ai.completion")
    key = "message." if dialect == "openinference" else ""
    call = "tool_call." if dialect == "openinference" else ""
    fn = "function." if dialect == "openinference" else ""
    attrs: dict[str, Any] = {f"{prefix}.0.{key}role": "system", f"{prefix}.0.{key}content": system}
    for i, m in enumerate(msgs, 1):
        attrs[f"{prefix}.{i}.{key}role"] = m["role"]
        if m["role"] == "assistant":
            attrs[f"{prefix}.{i}.{key}tool_calls.0.{call}id"] = m["call"]
            attrs[f"{prefix}.{i}.{key}tool_calls.0.{call}{fn}name"] = "lookup"
            attrs[f"{prefix}.{i}.{key}tool_calls.0.{call}{fn}arguments"] = '{"order_id": "A-1"}'
        else:
            attrs[f"{prefix}.{i}.{key}content"] = m["text"]
        if m["role"] == "tool":
            attrs[f"{prefix}.{i}.{key}tool_call_id"] = m["call"]
    attrs[f"{out}.0.{key}role"] = "assistant"
    if final:
        attrs[f"{out}.0.{key}content"] = "APPROVED"
    else:
        attrs[f"{out}.0.{key}tool_calls.0.{call}id"] = f"call_{k}"
        attrs[f"{out}.0.{key}tool_calls.0.{call}{fn}name"] = "lookup"
    if dialect == "openinference":
        attrs.update({"openinference.span.kind": "LLM", "llm.model_name": "m",
                      "llm.token_count.prompt": 10 * k, "llm.token_count.completion": 3})
    else:
        attrs.update({"gen_ai.request.model": "m", "gen_ai.usage.prompt_tokens": 10 * k,
                      "gen_ai.usage.completion_tokens": 3, "traceloop.span.kind": "llm"})
    return attrs


def agent_trace(trace: int, calls: int = 2, dialect: str = "otel-genai",
                system: str = "You are the desk.",
                t0: int = 1_780_000_000 * 10**9) -> list[SpanSpec]:
    """One agent run as spans: a root ``invoke_agent``, ``calls`` chat spans and a tool span
    after every chat span but the last (``1 + 2 * calls - 1`` spans)."""
    tid, root = _hex(trace, 32), _hex(trace * 1000 + 1, 16)
    spans: list[dict[str, Any]] = []
    t = t0
    for k in range(1, calls + 1):
        spans.append({"trace_id": tid, "span_id": _hex(trace * 1000 + 2 * k, 16),
                      "parent_id": root, "name": "chat m", "start": t, "end": t + 10,
                      "attributes": _chat_attrs(dialect, k, system, k == calls)})
        t += 20
        if k < calls:
            spans.append({"trace_id": tid, "span_id": _hex(trace * 1000 + 2 * k + 1, 16),
                          "parent_id": root, "name": "execute_tool lookup", "start": t,
                          "end": t + 5, "attributes": {
                              "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                              "gen_ai.tool.call.id": f"call_{k}",
                              "gen_ai.tool.call.arguments": '{"order_id": "A-1"}',
                              "gen_ai.tool.call.result": f'{{"amount": {k}}}'}})
            t += 10
    spans.append({"trace_id": tid, "span_id": root, "name": "invoke_agent desk", "start": t0 - 1,
                  "end": t + 1, "attributes": {"gen_ai.operation.name": "invoke_agent",
                                               "gen_ai.agent.name": "desk"}})
    return spans


def conversation_turn(c: int, t: int, system: str = "You are the desk.") -> list[SpanSpec]:
    """Turn ``t`` of conversation ``c`` (``gen_ai.conversation.id`` on every span): an agent
    trace whose chat requests hold every earlier turn's question and answer before this
    turn's question ``order C<c>-<t>?``; its answer is ``OK C<c>-<t>``."""
    history: list[dict[str, Any]] = []
    for j in range(t):
        history += [{"role": "user", "parts": [{"type": "text", "content": f"order C{c}-{j}?"}]},
                    {"role": "assistant", "parts": [{"type": "text", "content": f"OK C{c}-{j}"}]}]
    spans = [dict(x) for x in agent_trace(10_000_000 + c * 100 + t, calls=2, system=system)]
    for span in spans:
        attrs = dict(span["attributes"])
        attrs["gen_ai.conversation.id"] = f"conversation-{c}"
        if "gen_ai.input.messages" in attrs:
            msgs = json.loads(attrs["gen_ai.input.messages"])
            msgs[0]["parts"][0]["content"] = f"order C{c}-{t}?"
            attrs["gen_ai.input.messages"] = json.dumps(history + msgs)
            attrs["gen_ai.output.messages"] = attrs["gen_ai.output.messages"].replace(
                '"APPROVED"', f'"OK C{c}-{t}"')
        span["attributes"] = attrs
    return spans
