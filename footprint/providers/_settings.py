"""Constructor settings shared by the wire providers, checked once at build."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint._errors import ConfigError
from footprint.providers._types import LLMRequest

if TYPE_CHECKING:
    from footprint.providers._http import HttpCall

__all__ = ["Generation", "WireSettings", "check_stop", "generation", "wire_settings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WireSettings:
    model: str
    base_url: str
    api_key: str | None = field(repr=False)
    api_key_env: str
    timeout: float
    max_retries: int
    deadline: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Generation:
    """A provider's generation defaults: what a request leaves open, these fill.

    A value set on the request (by the agent: ``Agent(max_tokens=...)``) wins.
    """

    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()

    def apply(self, request: LLMRequest) -> LLMRequest:
        """``request`` with its open generation fields filled from these defaults."""
        if request.max_tokens is not None and request.temperature is not None and request.stop:
            return request
        return dataclasses.replace(
            request,
            max_tokens=request.max_tokens if request.max_tokens is not None else self.max_tokens,
            temperature=(
                request.temperature if request.temperature is not None else self.temperature
            ),
            stop=request.stop or self.stop,
        )

def _positive(kind: str, label: str, value: object, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(
            f"{kind} {label}={value!r} must be a positive number; pass e.g. {example}"
        )
    return float(value)


def check_stop(kind: str, stop: object) -> tuple[str, ...]:
    """``stop`` as a tuple of non-empty strings (one string is one sequence)."""
    if stop is None:
        return ()
    items = (stop,) if isinstance(stop, str) else stop
    if not isinstance(items, Sequence) or not all(isinstance(s, str) and s for s in items):
        raise ConfigError(
            f"{kind} stop={stop!r} must be a stop string or a list of non-empty strings; "
            "pass e.g. stop=['\\n\\nUser:']"
        )
    return tuple(items)


def generation(
    kind: str, *, max_tokens: object, temperature: object, stop: object
) -> Generation:
    """Checked generation defaults for a provider or an agent."""
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise ConfigError(
            f"{kind} max_tokens={max_tokens!r} must be an integer >= 1; pass e.g. max_tokens=1024"
        )
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
        or temperature < 0
    ):
        raise ConfigError(
            f"{kind} temperature={temperature!r} must be a number >= 0; pass e.g. temperature=0.2"
        )
    return Generation(
        max_tokens=max_tokens,
        temperature=float(temperature) if temperature is not None else None,
        stop=check_stop(kind, stop),
    )


def wire_settings(
    *,
    kind: str,
    model: str,
    base_url: str | None,
    base_url_env: str,
    default_base_url: str,
    api_key: str | None,
    api_key_env: str,
    timeout: float,
    max_retries: int,
    deadline: float | None = None,
) -> WireSettings:
    """Resolve explicit values, then environment variables, then defaults."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(
            f"{kind} needs a model name, got {model!r}; pass e.g. {kind}(model='my-model')"
        )
    _positive(kind, "timeout", timeout, "timeout=60 (seconds per attempt)")
    if deadline is not None:
        _positive(kind, "deadline", deadline, "deadline=120 (seconds for all attempts)")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigError(
            f"{kind} max_retries={max_retries!r} must be an integer >= 0 (0 = no retries)"
        )
    url = base_url or os.environ.get(base_url_env) or default_base_url
    if not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{kind} base_url={url!r} is not an http(s) URL; pass base_url='http://host:port"
            f"...' or set {base_url_env}"
        )
    return WireSettings(
        model=model,
        base_url=url.rstrip("/"),
        api_key=api_key or os.environ.get(api_key_env) or None,
        api_key_env=api_key_env,
        timeout=float(timeout),
        max_retries=max_retries,
        deadline=float(deadline) if deadline is not None else None,
    )


def wire_call(provider: str, settings: WireSettings, path: str, payload: dict[str, Any],
              headers: dict[str, str]) -> HttpCall:
    """The :class:`HttpCall` of one request to ``settings.base_url + path`` (every wire
    provider's limits, retries and deadline from its settings)."""
    from footprint.providers._http import HttpCall

    return HttpCall(
        provider=provider, url=f"{settings.base_url}{path}", base_url=settings.base_url,
        model=str(payload["model"]), payload=payload, headers=headers,
        timeout=settings.timeout, max_retries=settings.max_retries,
        api_key_env=settings.api_key_env, has_api_key=bool(settings.api_key),
        deadline=settings.deadline,
    )
