"""Who and what a run is for: user, session, tags and metadata per run; release and
environment per agent. Checked once, recorded on ``run.start``, filterable everywhere."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from footprint._errors import ConfigError

__all__ = ["RunMeta", "check_deployment", "run_meta"]

Scalar = str | int | float | bool | None


def _no_metadata() -> Mapping[str, Scalar]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunMeta:
    """The caller's labels for one run (``agent.run(message, user=..., ...)``)."""

    user: str | None = None
    session: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Scalar] = field(default_factory=_no_metadata)


def _label(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{name}={value!r} must be a non-empty string; pass e.g. {name}='u-42'")
    return value


def _tags(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence | frozenset | set):
        raise ConfigError(
            f"tags={value!r} must be a list of strings, not one string; pass e.g. "
            f"tags=[{value!r}]" if isinstance(value, str) else
            f"tags={value!r} must be a list of strings; pass e.g. tags=['beta', 'eu']"
        )
    items = sorted(value) if isinstance(value, set | frozenset) else list(value)
    bad = [t for t in items if not isinstance(t, str) or not t.strip()]
    if bad:
        raise ConfigError(f"tags={value!r} holds {bad[0]!r}; every tag must be a non-empty string")
    return tuple(items)


def _metadata(value: object) -> Mapping[str, Scalar]:
    if value is None:
        return _no_metadata()
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"metadata={value!r} must be a dict of names to strings, numbers or booleans; "
            "pass e.g. metadata={'ticket': 'T-1'}"
        )
    for key, item in value.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"metadata key {key!r} must be a non-empty string")
        if item is not None and not isinstance(item, str | int | float | bool):
            raise ConfigError(
                f"metadata[{key!r}]={item!r} is a {type(item).__name__}; values must be "
                "strings, numbers, booleans or None (write it as a string)"
            )
    return MappingProxyType(dict(value))


def run_meta(*, user: object, session: object, tags: object, metadata: object) -> RunMeta:
    """Checked run labels; a bad one is a one-line :class:`ConfigError`."""
    return RunMeta(user=_label("user", user), session=_label("session", session),
                   tags=_tags(tags), metadata=_metadata(metadata))


def check_deployment(release: object, environment: object) -> None:
    """``Agent(release=..., environment=...)`` are non-empty strings or ``None``."""
    _label("release", release)
    _label("environment", environment)
