"""The OTel GenAI JSON dialect: ``gen_ai.input.messages``, ``gen_ai.system_instructions``,
``gen_ai.tool.definitions``, ``gen_ai.output.messages`` (JSON strings or arrays of parts)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import orjson

from recorder.ingest._flat import number
from recorder.ingest._make import maker
from recorder.ingest._request import (
    Call,
    ChatRequest,
    Msg,
    ToolDef,
    arguments_of,
    text_of,
)

__all__ = ["CONTENT_KEYS", "genai_request", "has_any", "parse_json"]

CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
_REQUEST_KEYS = ("gen_ai.input.messages", "gen_ai.system_instructions")
_TRUNCATION_MARKS = ("[truncated]", "...(truncated)", "<truncated>", "…[truncated]")
assert all("truncated" in mark for mark in _TRUNCATION_MARKS)
_call, _msg, _tooldef, _request = maker(Call), maker(Msg), maker(ToolDef), maker(ChatRequest)
_ROLES = {"user": "user", "assistant": "assistant", "model": "assistant", "tool": "tool",
          "system": "system", "developer": "system"}


def parse_json(value: Any) -> Any:
    """An attribute holding JSON text, parsed (a non-JSON string stays a string)."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def has_any(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    """Whether ``attrs`` holds any of ``keys``."""
    return not attrs.keys().isdisjoint(keys)


def truncated(text: str) -> bool:
    tail = text[-24:].lower()
    if "truncated" not in tail:  # every mark holds the word
        return False
    return any(mark in tail for mark in _TRUNCATION_MARKS)


_RESULT_KEYS = ("response", "result", "content", "output")  # emitters differ


def _result(part: Mapping[str, Any]) -> str:
    for key in _RESULT_KEYS:
        if key in part:
            return text_of(part[key])
    return ""


WITHHELD = "withheld"
"""The note a part without its content adds: the emitter kept the message's shape (roles,
part types, tool call ids) but not what it said — pydantic-ai with ``include_content=False``."""


def _split(role: str, parts: list[Any], notes: list[str]) -> list[Msg]:
    """One emitted message as our messages: tool results each become a ``tool`` message."""
    texts: list[str] = []
    calls: list[Call] = []
    results: list[Msg] = []
    cut = False
    for part in parts:
        if type(part) is not dict:
            if isinstance(part, str):
                texts.append(part)
            if not isinstance(part, Mapping):
                continue
        kind = part.get("type")
        cut = cut or "truncated" in part  # footprint's own exporter marks a cut part so
        if kind == "text":
            if "content" not in part:
                notes.append(WITHHELD)
            texts.append(text_of(part.get("content")))
        elif kind == "tool_call":
            calls.append(_call(id=str(part.get("id") or ""), name=str(part.get("name") or ""),
                              arguments=arguments_of(part.get("arguments"))))
        elif kind == "tool_call_response":
            if not any(key in part for key in _RESULT_KEYS):
                notes.append(WITHHELD)
            text = _result(part)
            results.append(_msg(role="tool", content=text, tool_call_id=str(part.get("id") or ""),
                               tool_name=part.get("name"), truncated=truncated(text)))
        elif kind not in ("thinking", "reasoning"):
            notes.append(f"a {kind!r} part is not text and was left out")
    mapped = _ROLES.get(role, "user")
    if mapped == "system" and len(texts) > 1 and not calls and not results:
        return [_msg(role="system", content=t, truncated=truncated(t)) for t in texts]
    text = "\n".join(texts)
    out = []
    if texts or calls or not results:
        out.append(_msg(role=mapped, content=text, tool_calls=tuple(calls),
                       truncated=cut or truncated(text)))
    return out + results


def messages_of(raw: Any, notes: list[str]) -> list[Msg]:
    out: list[Msg] = []
    if not isinstance(raw, list):
        return out
    for m in raw:
        if type(m) is not dict and not isinstance(m, Mapping):
            continue
        parts = m.get("parts")
        # the common message, one text part with its content and nothing else, is read
        # here (what _split makes of it, without its general walk)
        if type(parts) is list and len(parts) == 1 and type(part := parts[0]) is dict \
                and len(part) == 2 and part.get("type") == "text" \
                and type(text := part.get("content")) is str:
            role = _ROLES.get(str(m.get("role") or "user"), "user")
            out.append(_msg(role=role, content=text, truncated=truncated(text)))
            continue
        if parts is None and "content" in m:
            parts = [{"type": "text", "content": m["content"]}]
        out += _split(str(m.get("role") or "user"), parts if isinstance(parts, list) else [],
                      notes)
    return out


def _tools(raw: Any) -> tuple[ToolDef, ...]:
    if not isinstance(raw, list):
        return ()
    out = []
    for t in raw:
        if type(t) is not dict and not isinstance(t, Mapping):
            continue
        fn = t.get("function") if isinstance(t.get("function"), Mapping) else t
        assert isinstance(fn, Mapping)
        params = parse_json(fn.get("parameters") or fn.get("input_schema") or {})
        out.append(_tooldef(name=str(fn.get("name") or ""),
                           description=str(fn.get("description") or ""),
                           parameters=params if isinstance(params, Mapping) else {}))
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _tools_text(text: str) -> tuple[ToolDef, ...]:
    """:func:`_tools` of an attribute's text: an agent offers the same tools to each of its
    calls, so each list is read once (its values are only ever read)."""
    return _tools(parse_json(text))


def _system(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list):
        return []
    return [text_of(p.get("content")) if isinstance(p, Mapping) else text_of(p) for p in raw]


@functools.lru_cache(maxsize=256)
def _system_text(text: str) -> tuple[str, ...]:
    """:func:`_system` of an attribute's text, read once per distinct text."""
    return tuple(_system(parse_json(text)))


def _system_of(value: Any) -> tuple[str, ...]:
    return _system_text(value) if type(value) is str else tuple(_system(value))


def _tools_of(value: Any) -> tuple[ToolDef, ...]:
    return _tools_text(value) if type(value) is str else _tools(value)


def _finish(attrs: Mapping[str, Any], output: Any) -> str | None:
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list) and reasons:
        return str(reasons[0])
    if isinstance(output, list) and output and (type(output[-1]) is dict
                                                or isinstance(output[-1], Mapping)):
        found = output[-1].get("finish_reason")
        return str(found) if found else None
    return None


def usage_and_model(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Usage, model and provider as every GenAI-flavoured dialect names them."""
    return {
        "model": str(attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
                     or ""),
        "provider": str(attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or ""),
        "input_tokens": number(attrs.get("gen_ai.usage.input_tokens")
                               or attrs.get("gen_ai.usage.prompt_tokens")),
        "output_tokens": number(attrs.get("gen_ai.usage.output_tokens")
                                or attrs.get("gen_ai.usage.completion_tokens")),
        "temperature": _float(attrs.get("gen_ai.request.temperature")),
        "max_tokens": number(attrs.get("gen_ai.request.max_tokens")) or None,
        "params": request_params(attrs),
    }


_PARAMS = {"max_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p",
           "top_k": "top_k", "stop_sequences": "stop", "seed": "seed",
           "frequency_penalty": "frequency_penalty", "presence_penalty": "presence_penalty"}
"""``gen_ai.request.<key>`` attributes and the request parameter each one records."""
_PARAM_KEYS = tuple((f"gen_ai.request.{key}", name) for key, name in _PARAMS.items())


def request_params(attrs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The generation parameters a span recorded (``gen_ai.request.*``), as sent."""
    out: dict[str, Any] = {}
    for key, name in _PARAM_KEYS:
        if key not in attrs:
            continue
        value = attrs[key]
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            out[name] = [value] if name == "stop" and isinstance(value, str) else value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[name] = list(value)
    return out


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def genai_request(attrs: Mapping[str, Any]) -> ChatRequest:
    """The request and response one OTel GenAI span (or its merged log record) carries.

    The request has content only when the span holds its input messages or system
    instructions, every part with what it said: an emitter with content capture off that
    still lists the parts' shapes (pydantic-ai's ``include_content=False``) leaves a
    request that cannot be re-sent, so none is made up from the shapes."""
    notes: list[str] = []
    inputs = messages_of(parse_json(attrs.get("gen_ai.input.messages")), notes)
    system = _system_of(attrs.get("gen_ai.system_instructions"))
    if any(m.role == "system" for m in inputs):
        system += tuple(m.content for m in inputs if m.role == "system")
        inputs = [m for m in inputs if m.role != "system"]
    output_raw = parse_json(attrs.get("gen_ai.output.messages"))
    output = messages_of(output_raw, notes)
    withheld = WITHHELD in notes
    has_content = not withheld and has_any(attrs, _REQUEST_KEYS)
    return _request(
        dialect="otel-genai", system=system if has_content else (),
        messages=tuple(inputs) if has_content else (),
        tools=_tools_of(attrs.get("gen_ai.tool.definitions")),
        output=tuple(output), finish_reason=_finish(attrs, output_raw),
        notes=tuple(n for n in dict.fromkeys(notes) if n != WITHHELD),
        has_content=has_content, **usage_and_model(attrs))
