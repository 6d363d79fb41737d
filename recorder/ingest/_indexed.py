"""The two flattened dialects: OpenInference (``llm.input_messages.N.message.*``,
``llm.output_messages…``, ``llm.tools…``) and the legacy indexed GenAI attributes
(``gen_ai.prompt.N.*``, ``gen_ai.completion.N.*``, ``llm.request.functions.N.*``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recorder.ingest._flat import indexed, number
from recorder.ingest._genai import parse_json, truncated, usage_and_model
from recorder.ingest._request import Call, ChatRequest, Msg, ToolDef, arguments_of, text_of

__all__ = ["legacy_request", "openinference_request"]

_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
          "model": "assistant", "tool": "tool", "function": "tool", "system": "system",
          "developer": "system"}


def _calls(fields: Mapping[str, Any], prefix: str, inner: str) -> tuple[Call, ...]:
    out = []
    for _, call in indexed(fields, prefix):
        out.append(Call(id=str(call.get(f"{inner}id") or ""),
                        name=str(call.get(f"{inner}function.name") or call.get(f"{inner}name")
                                 or ""),
                        arguments=arguments_of(call.get(f"{inner}function.arguments")
                                               or call.get(f"{inner}arguments"))))
    return tuple(out)


def _oi_message(fields: Mapping[str, Any]) -> Msg:
    content = fields.get("message.content")
    if content is None:
        parts = [p.get("message_content.text") for _, p in
                 indexed(fields, "message.contents") if p.get("message_content.text")]
        content = "\n".join(str(p) for p in parts)
    text = text_of(content)
    role = _ROLES.get(str(fields.get("message.role") or "user").lower(), "user")
    return Msg(role=role,  # type: ignore[arg-type]
               content=text, tool_calls=_calls(fields, "message.tool_calls", "tool_call."),
               tool_call_id=fields.get("message.tool_call_id"),
               tool_name=fields.get("message.name") if role == "tool" else None,
               truncated=truncated(text))


def _gaps(found: list[tuple[int, dict[str, Any]]], what: str) -> list[str]:
    indices = [i for i, _ in found]
    if indices and indices != list(range(indices[-1] + 1)):
        missing = sorted(set(range(indices[-1] + 1)) - set(indices))
        return [f"{what} {missing[:5]} missing (the SDK's attribute limit cut them)"]
    return []


def _oi_tools(attrs: Mapping[str, Any]) -> tuple[ToolDef, ...]:
    out = []
    for _, fields in indexed(attrs, "llm.tools"):
        schema = parse_json(fields.get("tool.json_schema"))
        if not isinstance(schema, Mapping):
            continue
        fn = schema.get("function") if isinstance(schema.get("function"), Mapping) else schema
        assert isinstance(fn, Mapping)
        params = fn.get("parameters") or fn.get("params_json_schema") or {}
        out.append(ToolDef(name=str(fn.get("name") or ""),
                           description=str(fn.get("description") or ""),
                           parameters=params if isinstance(params, Mapping) else {}))
    return tuple(out)


_NOT_PARAMS = frozenset({"messages", "tools", "functions", "input", "stream", "stream_options"})
"""Invocation parameters that are the request's content or its transport, not generation."""


def openinference_request(attrs: Mapping[str, Any]) -> ChatRequest:
    """The request and response of one OpenInference ``LLM`` span."""
    found = indexed(attrs, "llm.input_messages")
    inputs = [_oi_message(fields) for _, fields in found]
    outputs = [_oi_message(fields) for _, fields in indexed(attrs, "llm.output_messages")]
    params = parse_json(attrs.get("llm.invocation_parameters"))
    params = params if isinstance(params, Mapping) else {}
    base = usage_and_model(attrs)
    base.update(
        model=str(attrs.get("llm.model_name") or base["model"]),
        provider=str(attrs.get("llm.provider") or attrs.get("llm.system") or base["provider"]),
        input_tokens=number(attrs.get("llm.token_count.prompt")) or base["input_tokens"],
        output_tokens=number(attrs.get("llm.token_count.completion")) or base["output_tokens"],
        temperature=params.get("temperature") if isinstance(params.get("temperature"),
                                                            int | float) else None,
        params={**base["params"], **{k: v for k, v in params.items() if k not in _NOT_PARAMS}})
    return ChatRequest(
        dialect="openinference", system=tuple(m.content for m in inputs if m.role == "system"),
        messages=tuple(m for m in inputs if m.role != "system"), tools=_oi_tools(attrs),
        output=tuple(outputs), finish_reason=None,
        notes=tuple(_gaps(found, "input messages")), has_content=bool(found),
        **base)


def _legacy_message(fields: Mapping[str, Any]) -> Msg:
    text = text_of(fields.get("content"))
    role = _ROLES.get(str(fields.get("role") or "user").lower(), "user")
    return Msg(role=role,  # type: ignore[arg-type]
               content=text, tool_calls=_calls(fields, "tool_calls", ""),
               tool_call_id=fields.get("tool_call_id"), truncated=truncated(text))


def _legacy_tools(attrs: Mapping[str, Any]) -> tuple[ToolDef, ...]:
    out = []
    for _, fields in indexed(attrs, "llm.request.functions"):
        params = parse_json(fields.get("parameters") or {})
        out.append(ToolDef(name=str(fields.get("name") or ""),
                           description=str(fields.get("description") or ""),
                           parameters=params if isinstance(params, Mapping) else {}))
    return tuple(out)


def legacy_request(attrs: Mapping[str, Any]) -> ChatRequest:
    """The request and response of one span in the legacy indexed GenAI attributes."""
    found = indexed(attrs, "gen_ai.prompt")
    inputs = [_legacy_message(fields) for _, fields in found]
    completions = indexed(attrs, "gen_ai.completion")
    finish = next((str(f["finish_reason"]) for _, f in completions if f.get("finish_reason")),
                  None)
    return ChatRequest(
        dialect="legacy-indexed", system=tuple(m.content for m in inputs if m.role == "system"),
        messages=tuple(m for m in inputs if m.role != "system"), tools=_legacy_tools(attrs),
        output=tuple(_legacy_message(f) for _, f in completions), finish_reason=finish,
        notes=tuple(_gaps(found, "prompt messages")), has_content=bool(found),
        **usage_and_model(attrs))
