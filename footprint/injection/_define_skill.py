"""``define_skill``: a body, tools, and the declarations a skill may carry.

A skill is an ``llm-activated`` injection (``read_skill`` activates it). Its
metadata holds the snake_case keys the rest of the engine reads:
``surface_mode``, ``auto_activate``, ``cache``, ``steps``, ``on_skip``,
``produces``, ``consumes``, ``provider``, ``model`` (absent when not given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, TypeAlias

from footprint._errors import ConfigError
from footprint.injection._checks import (
    check_cache,
    check_id,
    check_text,
    check_tools,
    freeze,
    where_of,
)
from footprint.injection._steps import SkillStep, check_kinds, check_steps
from footprint.injection._types import (
    CachePolicy,
    Injection,
    InjectionContent,
    LLMActivated,
)
from footprint.providers import Provider

__all__ = ["SURFACE_MODES", "SurfaceMode", "define_skill"]

SurfaceMode: TypeAlias = Literal["auto", "system-prompt", "tool-only", "both"]
SURFACE_MODES: tuple[SurfaceMode, ...] = ("auto", "system-prompt", "tool-only", "both")


def _check_surface(where: str, surface_mode: object, auto_activate: object) -> None:
    if surface_mode not in SURFACE_MODES:
        raise ConfigError(
            f"{where}: surface_mode={surface_mode!r}; use one of {list(SURFACE_MODES)!r}."
        )
    if auto_activate is not None and auto_activate != "currentSkill":
        raise ConfigError(
            f"{where}: auto_activate={auto_activate!r}; the only value is "
            f"'currentSkill' (tools offered only while the skill is active), or None."
        )


def _check_brain(where: str, provider: object, model: object, title: object) -> None:
    if title is not None:
        check_text(where, "title", title, "give a plain name, or drop title.")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigError(
            f"{where}: model={model!r}; name the model as a non-empty string, or "
            f"drop it to use the agent's model."
        )
    if provider is not None and not isinstance(provider, Provider):
        raise ConfigError(
            f"{where}: provider={provider!r} is not a Provider (it needs a name and "
            f"an async complete(request)); pass a provider object or None."
        )


def define_skill(
    id: str,
    description: str,
    body: str,
    tools: Iterable[object] = (),
    surface_mode: SurfaceMode = "auto",
    auto_activate: Literal["currentSkill"] | None = None,
    steps: Iterable[SkillStep | Mapping[str, object]] | None = None,
    on_skip: Literal["advance", "hold"] | None = None,
    produces: Iterable[str] | None = None,
    consumes: Iterable[str] | None = None,
    provider: Provider | None = None,
    model: str | None = None,
    cache: CachePolicy | None = None,
    title: str | None = None,
) -> Injection:
    """A skill the model activates with ``read_skill``; its body and tools ride while active."""
    where = where_of("define_skill", id)
    check_id(where, id)
    check_text(where, "description", description,
               "say in one line when the model should read this skill.")
    check_text(where, "body", body, "write the skill's instructions as body='...'.")
    _check_surface(where, surface_mode, auto_activate)
    checked_tools = check_tools(where, tools)
    tool_names = frozenset(t.schema.name for t in checked_tools)
    checked_steps, policy = check_steps(where, steps, on_skip, tool_names)
    _check_brain(where, provider, model, title)
    metadata = {
        "surface_mode": surface_mode, "auto_activate": auto_activate,
        "cache": check_cache(where, cache, "skill"),
        "steps": checked_steps, "on_skip": policy,
        "produces": check_kinds(where, "produces", produces),
        "consumes": check_kinds(where, "consumes", consumes),
        "provider": provider, "model": model,
    }
    return Injection(
        id=id, flavor="skill", trigger=LLMActivated(),
        inject=InjectionContent(system_prompt=body, tools=checked_tools),
        description=description, title=title, metadata=freeze(metadata),
    )
