"""Constructor settings shared by the wire providers, checked once at build."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from footprint._errors import ConfigError

__all__ = ["WireSettings", "wire_settings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WireSettings:
    model: str
    base_url: str
    api_key: str | None = field(repr=False)
    api_key_env: str
    timeout: float
    max_retries: int


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
) -> WireSettings:
    """Resolve explicit values, then environment variables, then defaults."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(
            f"{kind} needs a model name, got {model!r}; pass e.g. {kind}(model='my-model')"
        )
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError(f"{kind} timeout={timeout!r} must be a positive number of seconds")
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
    )
