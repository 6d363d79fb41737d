"""In-process models: a script of replies, or a function of the request.

Both are deterministic: tool calls without an id get ``call_1``, ``call_2``,
... in the order the model produced them, response ids count up, and usage
is estimated from character counts (four characters per token).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeAlias

from footprint._errors import ConfigError, RunError
from footprint.providers._arguments import encode_arguments, estimate_tokens, estimate_usage_tokens
from footprint.providers._types import LLMRequest, LLMResponse, ToolCall, Usage

__all__ = ["FunctionModel", "Reply", "ScriptedModel", "call"]

Reply: TypeAlias = str | ToolCall | Sequence[ToolCall] | LLMResponse
"""One model turn: final text, one tool call, several tool calls, or a full response."""

ReplyFunction: TypeAlias = Callable[[LLMRequest], Reply | Awaitable[Reply]]


def call(name: str, /, **arguments: object) -> ToolCall:
    """A tool call without an id; the model numbers it (``call_<n>``)."""
    return ToolCall(id="", name=name, arguments=arguments)


def _reply_problem(reply: object) -> str | None:
    """Why ``reply`` is not a valid :data:`Reply`, or None when it is."""
    if isinstance(reply, str | ToolCall | LLMResponse):
        return None
    if isinstance(reply, Sequence) and not isinstance(reply, bytes | bytearray):
        bad = [item for item in reply if not isinstance(item, ToolCall)]
        if not reply:
            return "an empty list of tool calls"
        return None if not bad else f"a list holding {bad[0]!r}"
    return f"{reply!r} of type {type(reply).__name__}"


_REPLY_FIX = (
    "give a str (final text), a ToolCall, a list of ToolCall, or an LLMResponse"
)


class _Numbering:
    """Per-model counters for call ids and response ids."""

    __slots__ = ("calls", "responses")

    def __init__(self) -> None:
        self.calls = 0
        self.responses = 0

    def shape(self, reply: Reply, request: LLMRequest, prefix: str) -> LLMResponse:
        self.responses += 1
        if isinstance(reply, LLMResponse):
            return dataclasses.replace(reply, tool_calls=self._number(reply.tool_calls))
        calls: tuple[ToolCall, ...] = ()
        if isinstance(reply, str):
            content = reply
        elif isinstance(reply, ToolCall):
            content, calls = "", self._number((reply,))
        else:
            content, calls = "", self._number(tuple(reply))
        return LLMResponse(
            content=content,
            tool_calls=calls,
            usage=_estimate(request, content, calls),
            stop_reason="tool_use" if calls else "end_turn",
            model=request.model,
            response_id=f"{prefix}-{self.responses}",
        )

    def _number(self, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        numbered: list[ToolCall] = []
        for item in calls:
            self.calls += 1
            numbered.append(item if item.id else dataclasses.replace(item, id=f"call_{self.calls}"))
        return tuple(numbered)


def _estimate(request: LLMRequest, content: str, calls: tuple[ToolCall, ...]) -> Usage:
    produced = content + "".join(c.name + encode_arguments(c) for c in calls)
    return Usage(
        input_tokens=estimate_usage_tokens(request), output_tokens=estimate_tokens(produced)
    )


class ScriptedModel:
    """A model that plays back a fixed list of replies, one per call.

    >>> model = ScriptedModel([call("lookup", city="Oslo"), "It is sunny in Oslo."])

    Every request received is kept in :attr:`requests`. Asking for more
    replies than were scripted is a :class:`RunError`.
    """

    def __init__(
        self, replies: Iterable[Reply], *, name: str = "scripted", model: str | None = None
    ) -> None:
        self._replies: tuple[Reply, ...] = tuple(replies)
        for index, reply in enumerate(self._replies):
            problem = _reply_problem(reply)
            if problem is not None:
                raise ConfigError(
                    f"ScriptedModel reply #{index + 1} is {problem}; {_REPLY_FIX}"
                )
        self._name = name
        self._model = model
        self._numbering = _Numbering()
        self.requests: list[LLMRequest] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been played yet."""
        return len(self._replies) - len(self.requests)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        position = len(self.requests)
        self.requests.append(request)
        if position >= len(self._replies):
            raise RunError(
                f"ScriptedModel {self._name!r} was asked for reply #{position + 1} but only "
                f"{len(self._replies)} were scripted; add more replies to "
                f"ScriptedModel([...]) or make the run stop sooner (e.g. a final str reply)"
            )
        response = self._numbering.shape(self._replies[position], request, self._name)
        if self._model is not None:
            response = dataclasses.replace(response, model=self._model)
        return response


class FunctionModel:
    """A model whose every reply is ``fn(request)`` (sync or async).

    ``fn`` returns a :data:`Reply`. Every request received is kept in
    :attr:`requests`. ``request.seed`` is the run's seed (``Agent(seed=)``,
    varied by ``why`` across re-runs): sample with it, e.g.
    ``random.Random(request.seed)``, and each seed gives its own draw.
    """

    def __init__(self, fn: ReplyFunction, name: str = "function") -> None:
        if not callable(fn):
            raise ConfigError(
                f"FunctionModel needs a callable fn(request) -> reply, got {fn!r}; "
                "pass a function or an async function"
            )
        self._fn = fn
        self._name = name
        self._numbering = _Numbering()
        self.requests: list[LLMRequest] = []

    @property
    def name(self) -> str:
        return self._name

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        produced = self._fn(request)
        reply = await produced if inspect.isawaitable(produced) else produced
        problem = _reply_problem(reply)
        if problem is not None:
            raise RunError(
                f"FunctionModel {self._name!r}: fn returned {problem} for call "
                f"#{len(self.requests)}; make fn {_REPLY_FIX}"
            )
        return self._numbering.shape(reply, request, self._name)
