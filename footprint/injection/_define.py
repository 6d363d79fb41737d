"""Factories for steering, instructions, facts and the generic injection.

Each returns a frozen :class:`Injection` or raises :class:`ConfigError`
naming the factory, the bad value and the fix (spec §1.1, §1.4).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from footprint._errors import ConfigError
from footprint.injection._checks import (
    check_cache,
    check_callable,
    check_flavor,
    check_id,
    check_messages,
    check_pattern_or_name,
    check_role,
    check_slot,
    check_text,
    check_tools,
    freeze,
    where_of,
)
from footprint.injection._template import check_template
from footprint.injection._types import (
    Always,
    CachePolicy,
    InjectedMessage,
    Injection,
    InjectionContent,
    InjectionContext,
    LLMActivated,
    OnToolReturn,
    Role,
    Rule,
    Slot,
    Trigger,
)

__all__ = ["define_fact", "define_injection", "define_instruction", "define_steering"]

Predicate = Callable[[InjectionContext], object]


def _trigger_of(active_when: Predicate | None) -> Trigger:
    return Always() if active_when is None else Rule(active_when=active_when)


def _content(text: str, slot: Slot, role: Role) -> InjectionContent:
    if slot == "messages":
        return InjectionContent(messages=(InjectedMessage(role=role, content=text),))
    return InjectionContent(system_prompt=text)


def _check_template_use(
    where: str, template: str, slot: Slot, cache: object
) -> bool:
    """Refuse a template in the messages slot or with caching; return ``templated``."""
    check_text(where, "prompt_template", template,
               "write the template text, e.g. 'Action {{action}} of {{actionBudget}}.'")
    if slot == "messages":
        raise ConfigError(
            f"{where}: prompt_template with slot='messages'; a template renders "
            f"per call and only the 'system-prompt' slot re-renders, so use "
            f"slot='system-prompt' or a fixed prompt=..."
        )
    if cache is not None and cache != "never":
        raise ConfigError(
            f"{where}: prompt_template with cache={cache!r}; rendered text changes "
            f"every call and can never be a cached prefix, so drop cache or use "
            f"cache='never'."
        )
    return check_template(where, template)


def define_instruction(
    id: str,
    prompt: str | None = None,
    prompt_template: str | None = None,
    active_when: Predicate | None = None,
    slot: Slot = "system-prompt",
    role: Role = "user",
    cache: CachePolicy | None = None,
    description: str | None = None,
) -> Injection:
    """An instruction: a rule if ``active_when`` is given, else always on."""
    where = where_of("define_instruction", id)
    check_id(where, id)
    check_slot(where, slot)
    check_role(where, role)
    check_callable(where, "active_when", active_when)
    templated = False
    if prompt is not None and prompt_template is not None:
        raise ConfigError(
            f"{where}: both prompt={prompt!r} and prompt_template={prompt_template!r}; "
            f"pass exactly one (prompt_template only when it names run-time facts)."
        )
    if prompt_template is not None:
        templated = _check_template_use(where, prompt_template, slot, cache)
        text = prompt_template
    else:
        text = check_text(where, "prompt", prompt,
                          "pass prompt='...' (or prompt_template='...').")
    policy = check_cache(where, cache, "instructions")
    return Injection(
        id=id,
        flavor="instructions",
        trigger=_trigger_of(active_when),
        inject=_content(text, slot, role),
        description=description,
        templated=templated,
        metadata=freeze({"cache": policy}),
    )


def define_steering(
    id: str,
    prompt: str,
    description: str | None = None,
    cache: CachePolicy | None = None,
) -> Injection:
    """Always-on guidance in the system prompt (cached by default)."""
    where = where_of("define_steering", id)
    check_id(where, id)
    check_text(where, "prompt", prompt, "pass the steering text as prompt='...'.")
    return Injection(
        id=id,
        flavor="steering",
        trigger=Always(),
        inject=InjectionContent(system_prompt=prompt),
        description=description,
        metadata=freeze({"cache": check_cache(where, cache, "steering")}),
    )


def render_fact_data(where: str, data: object) -> str:
    """A string as written; any other JSON value as sorted, deterministic JSON."""
    if isinstance(data, str):
        return check_text(where, "data", data, "pass the fact as text or a JSON value.")
    if data is None or (isinstance(data, Mapping | list | tuple) and not data):
        raise ConfigError(
            f"{where}: data is {data!r}, which states nothing; pass the fact as "
            f"text or a non-empty JSON value."
        )
    if isinstance(data, float) and not math.isfinite(data):
        raise ConfigError(f"{where}: data is {data!r}; JSON has no such number.")
    try:
        return json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"{where}: data {data!r} is not JSON ({exc}); pass text, or plain "
            f"dicts/lists/str/int/float/bool."
        ) from None


def define_fact(
    id: str,
    data: object,
    active_when: Predicate | None = None,
    slot: Slot = "system-prompt",
    role: Role = "user",
    cache: CachePolicy | None = None,
    description: str | None = None,
) -> Injection:
    """A fact: text or a JSON value rendered deterministically (sorted keys)."""
    where = where_of("define_fact", id)
    check_id(where, id)
    check_slot(where, slot)
    check_role(where, role)
    check_callable(where, "active_when", active_when)
    text = render_fact_data(where, data)
    return Injection(
        id=id,
        flavor="fact",
        trigger=_trigger_of(active_when),
        inject=_content(text, slot, role),
        description=description,
        metadata=freeze({"cache": check_cache(where, cache, "fact")}),
    )


def _check_trigger(where: str, trigger: object) -> Trigger:
    if isinstance(trigger, Always):
        return trigger
    if isinstance(trigger, Rule):
        if trigger.active_when is None:
            raise ConfigError(
                f"{where}: Rule(active_when=None); pass a function of the context, "
                f"or use Always()."
            )
        check_callable(where, "active_when", trigger.active_when)
        return trigger
    if isinstance(trigger, OnToolReturn):
        check_pattern_or_name(where, trigger.tool_name)
        return trigger
    if isinstance(trigger, LLMActivated):
        if trigger.via_tool_name != "read_skill":
            raise ConfigError(
                f"{where}: via_tool_name={trigger.via_tool_name!r}; the model activates "
                f"injections only through read_skill, so use LLMActivated()."
            )
        return trigger
    raise ConfigError(
        f"{where}: trigger {trigger!r} is not a trigger; use Always(), "
        f"Rule(active_when=...), OnToolReturn(tool_name=...) or LLMActivated()."
    )


def _generic_content(
    where: str,
    system_prompt: str | None,
    prompt_template: str | None,
    cache: object,
    messages: Iterable[InjectedMessage],
    tools: Iterable[object],
) -> tuple[InjectionContent, bool]:
    """The checked content of a generic injection, and whether it is templated."""
    templated = False
    if system_prompt is not None and prompt_template is not None:
        raise ConfigError(
            f"{where}: both system_prompt={system_prompt!r} and prompt_template="
            f"{prompt_template!r}; pass exactly one."
        )
    if prompt_template is not None:
        templated = _check_template_use(where, prompt_template, "system-prompt", cache)
        system_prompt = prompt_template
    elif system_prompt is not None:
        check_text(where, "system_prompt", system_prompt, "pass non-empty text or None.")
    content = InjectionContent(
        system_prompt=system_prompt,
        messages=check_messages(where, messages),
        tools=check_tools(where, tools),
    )
    if not (content.system_prompt or content.messages or content.tools):
        raise ConfigError(
            f"{where}: the injection contributes nothing; pass system_prompt=..., "
            f"prompt_template=..., messages=... or tools=..."
        )
    return content, templated


def define_injection(
    id: str,
    flavor: str,
    trigger: Trigger,
    *,
    system_prompt: str | None = None,
    prompt_template: str | None = None,
    messages: Iterable[InjectedMessage] = (),
    tools: Iterable[object] = (),
    description: str | None = None,
    title: str | None = None,
    cache: CachePolicy | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Injection:
    """The generic factory: any flavor, any trigger, any mix of slots."""
    where = where_of("define_injection", id)
    check_id(where, id)
    checked_flavor = check_flavor(where, flavor)
    checked_trigger = _check_trigger(where, trigger)
    meta = dict(metadata or {})
    declared_cache = cache if cache is not None else meta.get("cache")
    content, templated = _generic_content(
        where, system_prompt, prompt_template, declared_cache, messages, tools
    )
    meta["cache"] = check_cache(where, declared_cache, checked_flavor)
    return Injection(
        id=id, flavor=checked_flavor, trigger=checked_trigger, inject=content,
        description=description, title=title, templated=templated, metadata=freeze(meta),
    )
