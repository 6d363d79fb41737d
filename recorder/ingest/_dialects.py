"""Which dialect a span speaks, and what kind of step it is: adapters tried in order
(OTel GenAI JSON, OpenInference, legacy indexed); content sent as log records is merged
into its span first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from recorder.ingest._genai import CONTENT_KEYS, genai_request, has_any, parse_json
from recorder.ingest._indexed import legacy_request, openinference_request
from recorder.ingest._make import maker
from recorder.ingest._request import ChatRequest, text_of
from recorder.ingest._spans import ForeignLog, ForeignSpan

__all__ = ["SpanKind", "ToolInfo", "chat_request", "kind_of", "merge_logs", "tool_info"]

SpanKind: TypeAlias = Literal["chat", "tool", "agent", "retriever", "other", "foreign"]

_CHAT_OPS = frozenset({"chat", "text_completion", "generate_content"})
_OI_KINDS: dict[str, SpanKind] = {"LLM": "chat", "TOOL": "tool", "AGENT": "agent",
                                  "RETRIEVER": "retriever"}
_TL_KINDS: dict[str, SpanKind] = {"llm": "chat", "tool": "tool", "agent": "agent",
                                  "workflow": "agent"}


def _genai_flavoured(attrs: Mapping[str, Any]) -> bool:
    return any(k.startswith(("gen_ai.", "llm.", "openinference.", "traceloop.")) for k in attrs)


def kind_of(span: ForeignSpan) -> SpanKind:
    """``chat``/``tool``/``agent``/``retriever``; ``other`` for a GenAI-flavoured span of no
    kind we map; ``foreign`` for a span in no dialect we know."""
    a = span.attributes
    op = a.get("gen_ai.operation.name")
    if op in _CHAT_OPS:
        return "chat"
    if op == "execute_tool":
        return "tool"
    if op in ("invoke_agent", "create_agent"):
        return "agent"
    for key, table in (("openinference.span.kind", _OI_KINDS), ("traceloop.span.kind",
                                                                 _TL_KINDS)):
        found = table.get(str(a.get(key, "")).upper() if key.startswith("open") else
                          str(a.get(key, "")).lower())
        if found is not None:
            return found
    if has_any(a, CONTENT_KEYS) or any(
            k.startswith(("gen_ai.prompt.", "llm.input_messages.")) for k in a):
        return "chat"
    return "other" if _genai_flavoured(a) else "foreign"


def chat_request(attrs: Mapping[str, Any]) -> ChatRequest:
    """The first adapter that finds content wins; a chat span with none keeps its usage
    (``has_content=False``)."""
    if has_any(attrs, CONTENT_KEYS):
        return genai_request(attrs)
    if any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in attrs):
        return openinference_request(attrs)
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attrs):
        return legacy_request(attrs)
    if any(k.startswith("llm.") for k in attrs):
        return openinference_request(attrs)
    return genai_request(attrs)


_EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _old_message(role: str, body: Any) -> dict[str, Any]:
    body = body if isinstance(body, Mapping) else {"content": body}
    parts: list[dict[str, Any]] = []
    if body.get("content") is not None:
        kind = "tool_call_response" if role == "tool" else "text"
        key = "response" if role == "tool" else "content"
        parts.append({"type": kind, key: body.get("content"), "id": body.get("id")})
    for call in body.get("tool_calls") or []:
        if isinstance(call, Mapping):
            fn = call.get("function") if isinstance(call.get("function"), Mapping) else call
            assert isinstance(fn, Mapping)
            parts.append({"type": "tool_call", "id": call.get("id"), "name": fn.get("name"),
                          "arguments": fn.get("arguments")})
    return {"role": role, "parts": parts}


def merge_logs(attrs: Mapping[str, Any], logs: Iterable[ForeignLog]) -> Mapping[str, Any]:
    """A span's attributes with the content its log records carried: a record holding
    ``gen_ai.input.messages``… adds them; the older per-message events
    (``gen_ai.user.message``, ``gen_ai.choice``…) become the same message lists."""
    if isinstance(logs, list | tuple) and not logs:
        return attrs  # nothing to merge: read the span's own attributes
    merged = dict(attrs)
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for log in logs:
        for key in (*CONTENT_KEYS, "gen_ai.tool.definitions"):
            if key in log.attributes and key not in merged:
                merged[key] = log.attributes[key]
        if log.event_name in _EVENT_ROLES:
            inputs.append(_old_message(_EVENT_ROLES[log.event_name], log.body))
        elif log.event_name == "gen_ai.choice" and isinstance(log.body, Mapping):
            message = log.body.get("message")
            out = _old_message("assistant", message)
            out["finish_reason"] = log.body.get("finish_reason")
            outputs.append(out)
    if inputs and "gen_ai.input.messages" not in merged:
        merged["gen_ai.input.messages"] = inputs
    if outputs and "gen_ai.output.messages" not in merged:
        merged["gen_ai.output.messages"] = outputs
    return merged


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInfo:
    """What a tool span says about its call."""

    name: str
    call_id: str | None
    arguments: Any
    result: str


def _first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        found = attrs.get(k)
        if found is not None:
            return found
    return None


def tool_info(span: ForeignSpan) -> ToolInfo:
    a = span.attributes
    name = _first(a, ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")) or span.name
    call_id = _first(a, ("gen_ai.tool.call.id", "tool_call.id", "tool.call_id", "tool_call_id"))
    args = _first(a, ("gen_ai.tool.call.arguments", "tool_arguments",
                      "input.value", "traceloop.entity.input"))
    result = _first(a, ("gen_ai.tool.call.result", "tool_response", "output.value",
                        "traceloop.entity.output"))
    return maker(ToolInfo)(name=str(name), call_id=str(call_id) if call_id else None,
                    arguments=parse_json(args), result=_tool_result(result))


def agent_name(spans: Sequence[ForeignSpan], root: ForeignSpan) -> str:
    """The agent's name: an attribute naming it, else the first agent span's name, else
    the root span's."""
    for s in spans:
        found = _first(s.attributes, ("gen_ai.agent.name", "agent.name", "agent_name"))
        if found:
            return str(found)
    return next((s.name for s in spans if kind_of(s) == "agent"), root.name)


def _tool_result(value: Any) -> str:
    """A tool span's output; a serialised LangChain ``ToolMessage`` gives its content."""
    parsed = parse_json(value)
    if isinstance(parsed, Mapping) and isinstance(parsed.get("data"), Mapping) and \
            parsed.get("type") == "tool":
        return text_of(parsed["data"].get("content"))
    return text_of(parsed)


def conversation_of(attrs: Mapping[str, Any]) -> str | None:
    found = _first(attrs, ("gen_ai.conversation.id", "session.id", "conversation.id"))
    return str(found) if found else None
