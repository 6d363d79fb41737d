"""OpenInference attributes, for Arize Phoenix and other OpenInference backends.

Off by default (``OTelSink(openinference=True)``). They sit beside the GenAI
conventions' attributes, never instead of them: ``openinference.span.kind``
(AGENT for the run, CHAIN for an iteration, LLM for a model call, TOOL for a
tool call), model name and token counts always; ``input.value`` /
``output.value`` and the flattened ``llm.input_messages.<i>.message.*`` /
``llm.output_messages.0.message.*`` only when content capture is on, from
the same redacted records as the GenAI content attributes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from footprint.events import LLMEnd, LLMStart, RunStart, ToolStart
from recorder.otel._attributes import Attrs, clip
from recorder.otel._content import Prompt

__all__ = ["MAX_MESSAGES", "OpenInference"]

MAX_MESSAGES = 64
"""The most recent messages of a request flattened into ``llm.input_messages.*``."""


class OpenInference:
    """Adds OpenInference attributes to span attribute dicts as :class:`RunTrace` builds them."""

    __slots__ = ("_content", "_limit")

    def __init__(self, content: bool, limit: int) -> None:
        self._content = content
        self._limit = limit

    @staticmethod
    def kind(a: Attrs, kind: str) -> None:
        a["openinference.span.kind"] = kind

    def _value(self, a: Attrs, side: str, text: str, mime: str = "text/plain") -> None:
        if self._content:
            a[f"{side}.value"] = clip(text, self._limit)
            a[f"{side}.mime_type"] = mime

    def run_input(self, a: Attrs, e: RunStart) -> None:
        if e.session_id or e.conversation_id:
            a["session.id"] = clip(str(e.session_id or e.conversation_id))
        if e.user_id:
            a["user.id"] = clip(e.user_id)
        if e.tags:
            a["tag.tags"] = tuple(clip(t) for t in e.tags)
        if e.metadata:
            a["metadata"] = clip(json.dumps(dict(e.metadata), ensure_ascii=False), self._limit)
        self._value(a, "input", e.user_message)

    def run_output(self, a: Attrs, text: str) -> None:
        self._value(a, "output", text)

    def chat_input(self, a: Attrs, e: LLMStart, prompt: Prompt | None) -> None:
        a["openinference.span.kind"] = "LLM"
        a["llm.model_name"] = clip(e.model)
        a["llm.provider"] = clip(e.provider)
        if not self._content or prompt is None:
            return
        messages: list[Any] = []
        if prompt.system:
            messages.append({"role": "system", "content": prompt.system})
        messages.extend(prompt.messages)
        self._value(a, "input", json.dumps({"messages": messages}, ensure_ascii=False,
                                           default=str), "application/json")
        for index, message in enumerate(messages[-MAX_MESSAGES:]):
            self._message(a, f"llm.input_messages.{index}.message.", message)

    def _message(self, a: Attrs, prefix: str, message: Mapping[str, Any]) -> None:
        a[prefix + "role"] = str(message.get("role", ""))
        if message.get("content"):
            a[prefix + "content"] = clip(str(message["content"]), self._limit)
        if message.get("tool_call_id"):
            a[prefix + "tool_call_id"] = str(message["tool_call_id"])
        for j, call in enumerate(message.get("tool_calls") or ()):
            head = f"{prefix}tool_calls.{j}.tool_call."
            a[head + "id"] = str(call.get("id", ""))
            a[head + "function.name"] = str(call.get("name", ""))
            a[head + "function.arguments"] = clip(
                json.dumps(call.get("arguments", {}), ensure_ascii=False, default=str),
                self._limit)

    def chat_output(self, a: Attrs, e: LLMEnd) -> None:
        if e.input_tokens is not None and e.output_tokens is not None:  # else unknown
            a["llm.token_count.prompt"] = e.input_tokens
            a["llm.token_count.completion"] = e.output_tokens
            a["llm.token_count.total"] = e.input_tokens + e.output_tokens
        if not self._content:
            return
        self._value(a, "output", e.content)
        calls = [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)}
                 for c in e.tool_calls]
        self._message(a, "llm.output_messages.0.message.",
                      {"role": "assistant", "content": e.content, "tool_calls": calls})

    def tool_input(self, a: Attrs, e: ToolStart) -> None:
        a["openinference.span.kind"] = "TOOL"
        a["tool.name"] = clip(e.tool_name)
        self._value(a, "input", json.dumps(dict(e.args), ensure_ascii=False, default=str),
                    "application/json")

    def tool_output(self, a: Attrs, result: str) -> None:
        self._value(a, "output", result)
