"""Define-time checks shared by every factory.

Each check raises :class:`ConfigError` with a message that starts with the
factory call (``define_instruction(greeting)``), quotes the bad value and
names the fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, get_args

from footprint._errors import ConfigError
from footprint._validate import brief, check_list
from footprint.injection._types import (
    FLAVORS,
    CachePolicy,
    CacheUntil,
    Flavor,
    InjectedMessage,
    Role,
    SkillTool,
    Slot,
)

__all__ = [
    "CACHE_DEFAULTS",
    "check_cache",
    "check_callable",
    "check_flavor",
    "check_id",
    "check_messages",
    "check_pattern_or_name",
    "check_role",
    "check_slot",
    "check_text",
    "check_tools",
    "freeze",
    "where_of",
]

CACHE_DEFAULTS: Mapping[str, CachePolicy] = MappingProxyType({
    "skill": "while-active",
    "steering": "always",
    "instructions": "never",
    "fact": "always",
    "memory": "while-active",
    "rag": "while-active",
})
_CACHE_NAMES = ("always", "never", "while-active")
_ROLES: tuple[str, ...] = get_args(Role)
_CONTENT_SLOTS = ("system-prompt", "messages")


def where_of(factory: str, id: object) -> str:
    """``define_skill(billing)`` for a string id, ``define_skill(None)`` otherwise."""
    return f"{factory}({id})" if isinstance(id, str) and id else f"{factory}({id!r})"


def check_id(where: str, id: object) -> str:
    if not isinstance(id, str) or not id.strip():
        raise ConfigError(
            f"{where}: id is {id!r}; give the injection a non-empty string id "
            f"such as 'billing'."
        )
    return id


def check_text(where: str, field: str, value: object, fix: str) -> str:
    """A required, non-blank string field (description, body, prompt)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {field} is {value!r}; {fix}")
    return value


def check_callable(where: str, field: str, value: object) -> None:
    if value is not None and not callable(value):
        raise ConfigError(
            f"{where}: {field} is {value!r}, which is not callable; pass a function "
            f"of the InjectionContext, e.g. {field}=lambda ctx: ctx.iteration > 1."
        )


def check_flavor(where: str, flavor: object) -> Flavor:
    if flavor not in FLAVORS:
        raise ConfigError(
            f"{where}: flavor {flavor!r} is unknown; use one of {list(FLAVORS)!r}."
        )
    return flavor


def check_cache(where: str, cache: object, flavor: str) -> CachePolicy:
    """Return the declared policy, or the flavor's default when ``cache`` is None."""
    if cache is None:
        return CACHE_DEFAULTS.get(flavor, "never")
    if isinstance(cache, CacheUntil) or cache in _CACHE_NAMES:
        return cache  # type: ignore[return-value]  # narrowed above
    raise ConfigError(
        f"{where}: cache={cache!r} is not a cache policy; use 'always', 'never', "
        f"'while-active' or CacheUntil(until=lambda ctx: ...)."
    )


def check_slot(where: str, slot: object) -> Slot:
    if slot not in _CONTENT_SLOTS:
        raise ConfigError(
            f"{where}: slot={slot!r}; text goes to 'system-prompt' (the default) or "
            f"'messages' (tools come only from a skill's tools=...)."
        )
    return slot  # type: ignore[return-value]  # narrowed by the membership test


def check_role(where: str, role: object) -> Role:
    if role == "tool":
        raise ConfigError(
            f"{where}: role='tool' cannot be delivered as a message (a tool message "
            f"needs a tool call to answer); use role='user', 'assistant' or 'system'."
        )
    if role not in _ROLES:
        raise ConfigError(
            f"{where}: role={role!r} is not a message role; use 'user', "
            f"'assistant' or 'system'."
        )
    return role  # type: ignore[return-value]  # narrowed by the membership test


def check_messages(where: str, messages: object) -> tuple[InjectedMessage, ...]:
    out: list[InjectedMessage] = []
    items = check_list(f"{where}: messages=", messages, item="messages",
                       example="messages=[InjectedMessage(role='user', content='...')]")
    for n, msg in enumerate(items):
        if not isinstance(msg, InjectedMessage):
            raise ConfigError(
                f"{where}: messages[{n}] is {msg!r}; pass "
                f"InjectedMessage(role='user', content='...')."
            )
        check_role(f"{where} messages[{n}]", msg.role)
        check_text(f"{where} messages[{n}]", "content", msg.content,
                   "give the message non-empty content.")
        out.append(msg)
    return tuple(out)


def check_tools(where: str, tools: object) -> tuple[SkillTool, ...]:
    out: list[SkillTool] = []
    names: set[str] = set()
    items = check_list(f"{where}: tools=", tools, item="tools", example="tools=[tool(fn)]")
    for n, tool in enumerate(items):
        if not isinstance(tool, SkillTool):
            wrap = "wrap it with tool(fn)" if callable(tool) else (
                "pass tool(fn) or SkillTool(schema=SkillToolSchema(name=..., "
                "description=...), execute=...)")
            raise ConfigError(f"{where}: tools[{n}] is {brief(tool)}; {wrap}")
        name = tool.schema.name
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{where}: tools[{n}] has name {name!r}; name the tool.")
        if name in names:
            raise ConfigError(
                f"{where}: two tools are named {name!r}; tool names must be unique "
                f"within a skill."
            )
        names.add(name)
        out.append(tool)
    return tuple(out)


def check_pattern_or_name(where: str, tool_name: object) -> None:
    if isinstance(tool_name, re.Pattern):
        return
    check_text(where, "tool_name", tool_name,
               "name the tool (a string matches exactly) or pass re.compile(...).")


def freeze(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of ``meta`` without the keys whose value is None."""
    return MappingProxyType({k: v for k, v in meta.items() if v is not None})
