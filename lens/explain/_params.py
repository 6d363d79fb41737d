"""The generation parameters a re-send puts on the wire: the recorded ones, verbatim.

A native ``llm.start`` keeps in ``params`` exactly what its provider sent beside
the messages and tools (a key that is absent was not sent). A run taken in from
a trace keeps what the trace recorded, which may leave out what was sent: each
of :data:`TRACKED` it lacks is *not in the trace*, and the person can supply it
(``--max-tokens``, ``--temperature``, ``--stop``, ``--param KEY=JSON``). A
re-send with no ``max_tokens`` recorded or supplied is capped at
:data:`DEFAULT_MAX_TOKENS` (a flag says so): a server left without a limit may
generate for minutes. The seed is not reused: each re-send carries its own
trial's seed (the baseline measures the model's noise across seeds).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from footprint._errors import ConfigError
from footprint.events import LLMStart
from footprint.providers import LLMRequest

__all__ = ["DEFAULT_MAX_TOKENS", "TRACKED", "SendParams", "parse_param", "send_params"]

TRACKED = ("max_tokens", "temperature", "top_p", "stop")
"""The parameters whose absence from a trace is said (each changes what a model answers)."""
DEFAULT_MAX_TOKENS = 1024
_ON_REQUEST = ("max_tokens", "temperature", "stop")
"""Carried by ``LLMRequest`` itself, so by any provider; the rest only by ``--base-url``."""
_NEVER = frozenset({"messages", "tools", "system", "model", "stream", "stream_options"})
_ALIASES = {"stop_sequences": "stop", "max_completion_tokens": "max_tokens"}


@dataclass(frozen=True, slots=True, kw_only=True)
class SendParams:
    """What every re-send carries, and where each value came from."""

    params: Mapping[str, Any]
    """The parameters sent (``seed`` aside: each re-send's own)."""
    recorded: tuple[str, ...]
    supplied: tuple[str, ...]
    missing: tuple[str, ...]
    """Of :data:`TRACKED`, those neither recorded nor supplied (never for a native run
    that recorded its parameters: there an absent key was not sent)."""
    complete: bool
    """The recording holds every parameter sent (a native run with ``params``)."""
    defaulted: bool
    """``max_tokens`` is :data:`DEFAULT_MAX_TOKENS`: none recorded or supplied."""
    seeded: bool
    """Whether the recorded call sent a seed (re-sends then send theirs)."""

    def apply(self, request: LLMRequest) -> LLMRequest:
        """``request`` with the parameters an ``LLMRequest`` carries set to these."""
        stop = self.params.get("stop") or ()
        return replace(request, max_tokens=self.params.get("max_tokens"),
                       temperature=self.params.get("temperature"),
                       stop=tuple(stop) if isinstance(stop, list | tuple) else (str(stop),))

    def extras(self) -> dict[str, Any]:
        """The parameters only a wire provider carries (``tool_choice``, ``top_p``, …)."""
        return {k: v for k, v in self.params.items() if k not in _ON_REQUEST}


def _normal(params: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        name = _ALIASES.get(key, key)
        if name in _NEVER or value is None:
            continue
        out[name] = [value] if name == "stop" and isinstance(value, str) else value
    return out


def _recorded(start: LLMStart, request: LLMRequest) -> dict[str, Any]:
    if start.params is not None:
        return _normal(start.params)
    return _normal({"max_tokens": request.max_tokens, "temperature": request.temperature,
                    "stop": list(request.stop) or None})


def send_params(start: LLMStart, request: LLMRequest, supplied: Mapping[str, Any], *,
                foreign: bool) -> SendParams:
    """The parameters to re-send ``start``'s request with (module doc)."""
    recorded = _recorded(start, request)
    seeded = "seed" in recorded or start.params is None or foreign
    recorded.pop("seed", None)
    given = _normal(supplied)
    params = {**recorded, **given}
    complete = start.params is not None and not foreign
    missing = () if complete else tuple(k for k in TRACKED if k not in params)
    defaulted = "max_tokens" not in params
    if defaulted:
        params["max_tokens"] = DEFAULT_MAX_TOKENS
    return SendParams(params=MappingProxyType(params), recorded=tuple(recorded),
                      supplied=tuple(given), missing=missing, complete=complete,
                      defaulted=defaulted, seeded=seeded)


def parse_param(text: str) -> tuple[str, Any]:
    """``KEY=JSON`` as ``(key, value)`` (a ``ConfigError`` quoting it when it is not)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--param {text!r} is not KEY=JSON; pass e.g. --param top_p=0.9 or "
                          "--param 'stop=[\"\\n\\nUser:\"]'")
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"--param {text!r}: {raw!r} is not JSON ({exc}); quote strings as "
                          "JSON, e.g. --param 'response_format={\"type\": \"text\"}'") from exc
    if key.strip() in _NEVER:
        raise ConfigError(f"--param {key.strip()!r} is part of the recorded request, not a "
                          "parameter; use --model to change the model")
    return key.strip(), value


def words(p: SendParams, step: str, foreign: bool) -> list[str]:
    """The report's flags about the parameters sent."""
    where = "the trace" if foreign else "the recording"
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(p.params.items()))
    out = [f"params: each re-send of {step} carried {shown or 'no parameters'} "
           f"(recorded: {', '.join(p.recorded) or 'none'}; supplied: "
           f"{', '.join(p.supplied) or 'none'}; the seed is each re-send's own)"]
    if p.missing:
        out.append(f"not-in-trace: {', '.join(p.missing)} of {step} not in {where}, so the "
                   "re-sends may not be the request that was sent; supply them with "
                   "--max-tokens, --temperature, --stop or --param KEY=JSON")
    if p.defaulted:
        out.append(f"default-max-tokens: no max_tokens was recorded or supplied for {step}; "
                   f"every re-send was capped at {DEFAULT_MAX_TOKENS} tokens (--max-tokens N "
                   "to change)")
    return out


def supplied_of(max_tokens: int | None, temperature: float | None,
                stop: Sequence[str] | None, params: Sequence[str] | None) -> dict[str, Any]:
    """The parameters a command line supplied (``--param`` first, the named options win)."""
    out = dict(parse_param(p) for p in params or ())
    if max_tokens is not None:
        out["max_tokens"] = max_tokens
    if temperature is not None:
        if temperature < 0:
            raise ConfigError(f"--temperature {temperature} is negative; pass 0 or more")
        out["temperature"] = temperature
    if stop:
        out["stop"] = list(stop)
    return out
