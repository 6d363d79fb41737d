"""An active injection as plain data, and whether its content may be cached.

``project_active_injection`` is the only builder of :class:`ActiveInjection`
(spec §1.4): it copies exactly the listed fields, turns tools into schemas
without ``execute``, and renders a templated prompt, omitting it rather
than letting an unrendered ``{{fact}}`` through.
"""

from __future__ import annotations

from footprint.injection._template import FactSource, render_template
from footprint.injection._types import (
    ActiveContent,
    ActiveInjection,
    CacheContext,
    CachePolicy,
    CacheUntil,
    Injection,
    ProjectedTool,
)

__all__ = ["is_cacheable", "project_active_injection"]

_SURFACE_MODES = ("auto", "system-prompt", "tool-only", "both")


def _system_prompt(inj: Injection, ctx: FactSource | None) -> str | None:
    text = inj.inject.system_prompt
    if not text:
        return None
    if inj.templated:
        return render_template(text, ctx) or None
    return text


def _cache_of(inj: Injection) -> CachePolicy | None:
    cache = inj.metadata.get("cache")
    if isinstance(cache, CacheUntil) or cache in ("always", "never", "while-active"):
        return cache
    return None


def project_active_injection(
    inj: Injection, ctx: FactSource | None = None
) -> ActiveInjection:
    """Project ``inj`` to serialisable data; ``ctx`` renders a templated prompt."""
    meta = inj.metadata
    surface = meta.get("surface_mode")
    auto = meta.get("auto_activate")
    tools = tuple(
        ProjectedTool(schema=tool.schema, injection_id=inj.id) for tool in inj.inject.tools
    )
    return ActiveInjection(
        id=inj.id,
        flavor=inj.flavor,
        description=inj.description or None,
        surface_mode=surface if surface in _SURFACE_MODES else None,
        auto_activate="currentSkill" if auto == "currentSkill" else None,
        cache=_cache_of(inj),
        inject=ActiveContent(
            system_prompt=_system_prompt(inj, ctx),
            messages=tuple(inj.inject.messages),
            tools=tools,
        ),
    )


def is_cacheable(policy: object, cache_ctx: CacheContext) -> bool:
    """Whether content under ``policy`` may be marked as a cached prefix (spec §1.4).

    ``always`` and ``while-active`` (the content is in the active list) are
    cacheable, ``never`` is not; ``CacheUntil`` is cacheable until its
    predicate is truthy, and a raise means not cacheable; any other form is not.
    """
    if isinstance(policy, CacheUntil):
        try:
            return not policy.until(cache_ctx)
        except Exception:
            return False
    return isinstance(policy, str) and policy in ("always", "while-active")
