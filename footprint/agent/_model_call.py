"""One model call: the brain that serves it, the exact request, and its record."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from footprint._errors import RunError
from footprint.agent._compose import Composition, content_hash
from footprint.agent._emitter import RunEmitter
from footprint.agent._setup import AgentSetup
from footprint.agent._state import RunState
from footprint.agent._wire import json_safe, request_json, response_json
from footprint.events import LLMEnd, LLMStart
from footprint.providers import LLMRequest, LLMResponse, Message, Provider, ToolSpec

__all__ = ["ModelCall", "call_model"]


class ModelCall:
    """The outcome of one call: the response and the step id that names it."""

    __slots__ = ("response", "step_id")

    def __init__(self, response: LLMResponse, step_id: str) -> None:
        self.response = response
        self.step_id = step_id


def _serving(setup: AgentSetup, state: RunState,
             cursor: str | None) -> tuple[Provider, str, str | None, str | None]:
    brain = setup.brain_for(cursor, state.escalation.escalated) if setup.brain_for else None
    if brain is None:
        return setup.provider, setup.model, None, None
    return brain.provider, brain.model or setup.model, brain.via, brain.skill_id


async def _complete(provider: Provider, request: LLMRequest,
                    timeout_s: float | None) -> LLMResponse:
    try:
        if timeout_s is None:
            return await provider.complete(request)
        async with asyncio.timeout(timeout_s):
            return await provider.complete(request)
    except TimeoutError:
        raise RunError(
            f"provider {provider.name!r} did not answer within model_timeout_s={timeout_s} "
            "(the agent's limit on one model call); raise model_timeout_s= or set the "
            "provider's own max_tokens=/deadline="
        ) from None
    except RunError:
        raise
    except Exception as exc:  # a provider bug becomes a RunError naming it
        raise RunError(
            f"provider {provider.name!r} raised {type(exc).__name__}: {exc}; "
            "check the provider's configuration or report the bug"
        ) from exc


def wire_params(provider: Provider, request: LLMRequest) -> dict[str, Any]:
    """The generation parameters ``provider`` sends with ``request``: its own account
    (``wire_params``, as ``OpenAIChat`` and ``AnthropicMessages`` give it), else the
    request's own (what a provider without a wire receives)."""
    own = getattr(provider, "wire_params", None)
    if callable(own):
        try:
            got = own(request)
        except Exception:  # a custom provider's bug: complete() will say
            got = None
        if isinstance(got, Mapping):
            return {str(k): json_safe(v) for k, v in got.items()}
    params: dict[str, Any] = {"model": request.model}
    for key, value in (("max_tokens", request.max_tokens), ("temperature", request.temperature),
                       ("stop", list(request.stop) or None), ("seed", request.seed)):
        if value is not None:
            params[key] = value
    return params


def _started(provider: Provider, request: LLMRequest, via: str | None,
             skill_id: str | None) -> dict[str, Any]:
    """The ``llm.start`` payload (built only for a sink that keeps it)."""
    wire = request_json(request)
    return dict(provider=provider.name, model=request.model, request_hash=content_hash(wire),
                system_prompt_chars=len(request.system), messages_count=len(request.messages),
                tools_count=len(request.tools), tool_names=tuple(t.name for t in request.tools),
                brain_via=via, brain_skill_id=skill_id, temperature=request.temperature,
                request_ref=wire, params=wire_params(provider, request))


async def call_model(setup: AgentSetup, state: RunState, em: RunEmitter, comp: Composition,
                     cursor: str | None, *, offer_tools: bool = True) -> ModelCall:
    """Resolve the brain, send the request, record ``llm.start``/``llm.end``."""
    provider, model, via, skill_id = _serving(setup, state, cursor)
    tools: tuple[ToolSpec, ...] = tuple(t.spec for t in comp.tools) if offer_tools else ()
    request = LLMRequest(model=model, system=comp.system, messages=tuple(state.history),
                         tools=tools, temperature=setup.temperature,
                         max_tokens=setup.max_tokens, stop=setup.stop, seed=state.seed)
    state.llm_calls += 1
    step = f"llm#{state.llm_calls}"
    em.emit_with(LLMStart, step, lambda: _started(provider, request, via, skill_id))
    t0 = em.clock.monotonic_ns()
    response = await _complete(setup.model_source or provider, request, setup.model_timeout_s)
    duration = (em.clock.monotonic_ns() - t0) / 1e6
    usage = response.usage
    em.emit_with(LLMEnd, step, lambda: dict(
        content=response.content, response_hash=content_hash(response_json(response)),
        tool_calls=response.tool_calls, input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens, cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens, stop_reason=response.stop_reason,
        duration_ms=duration, model=response.model or model,
        time_to_first_chunk_s=response.time_to_first_chunk_s))
    state.input_tokens += usage.input_tokens or 0  # unknown (None) adds nothing
    state.output_tokens += usage.output_tokens or 0
    state.history.append(Message(role="assistant", content=response.content,
                                 tool_calls=response.tool_calls, origin=step))
    return ModelCall(response, step)
