"""Argument checks for the graph builder's methods: each refusal is one line naming the fix."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from footprint._errors import ConfigError
from footprint._validate import brief, check_callable, check_instance, check_list, check_str
from footprint.graph._matchers import All, Intent, Keywords, Regex
from footprint.graph._routing import RoutingPolicy
from footprint.injection import Injection

__all__ = [
    "check_check_mode",
    "check_entry",
    "check_label",
    "check_phrases",
    "check_policy",
    "check_ref",
    "check_route",
    "check_scorer",
    "check_tool_names",
]

_MATCHERS = (Regex, Keywords, All, Intent)
_CHECK_MODES = ("throw", "warn", "off")


def check_ref(where: str, skill: object) -> None:
    """A skill reference: the skill Injection itself or its non-empty id."""
    if isinstance(skill, Injection):
        return
    if not isinstance(skill, str) or not skill.strip():
        raise ConfigError(
            f"{where} got {type(skill).__name__} {brief(skill)}; pass a skill made with "
            "define_skill(...) or its id"
        )


def check_label(where: str, label: object) -> None:
    if label is not None:
        check_str(f"{where} label", label, fix="pass a short text or None")


def check_entry(skill_id: str, when: object, match: object, examples: object) -> tuple[str, ...]:
    """The entry's examples as a tuple, after checking ``when``, ``match`` and ``examples``."""
    where = f"entry({skill_id!r})"
    if when is not None:
        check_callable(f"{where} when=", when,
                       fix="pass a function of the context, e.g. when=lambda ctx: ..., "
                           "or a data matcher as match=")
    if match is not None:
        check_instance(f"{where} match=", match, _MATCHERS,
                       fix="pass Keywords([...]), Regex('...'), All([...]) or Intent('...')")
    # each row's text is checked at build, with the other example rules
    return check_list(f"{where} examples=", examples, item="example messages",
                      example="examples=['I want my money back']")


def check_route(where: str, when: object, on_tool_return: object, guard: object) -> None:
    if when is not None:
        check_callable(f"{where} when=", when,
                       fix="pass a function of the tool result, e.g. when=lambda res: ..., "
                           "or on_tool_return='tool_name'")
    if on_tool_return is not None and not isinstance(on_tool_return, re.Pattern):
        check_str(f"{where} on_tool_return=", on_tool_return,
                  fix="name the tool (exact) or pass re.compile(...)")
    if guard is not None and not isinstance(guard, Mapping):
        raise ConfigError(
            f"{where} guard= is {type(guard).__name__} {brief(guard)}; pass a mapping of "
            "field to conditions, e.g. guard={'risk': {'lt': 'high'}}"
        )


def check_phrases(where: str, phrases: object) -> tuple[str, ...]:
    # each phrase's text is checked at build (duplicates, empty ones)
    return check_list(where, phrases, item="phrases", example="never_routes(['cancel'])")


def check_tool_names(where: str, names: object) -> tuple[str, ...] | None:
    if names is None:
        return None
    items = check_list(where, names, item="tool names", example="known_tools=['lookup']")
    for item in items:
        check_str(f"{where} item", item, fix="each tool name is a non-empty text")
    return items


def check_check_mode(check: object) -> None:
    if check not in _CHECK_MODES or not isinstance(check, str):
        raise ConfigError(f"build(check={brief(check)}) is not a mode; use 'throw', 'warn' "
                          "or 'off'")


def check_scorer(where: str, scorer: object) -> None:
    """A scorer has a ``name`` and a callable ``score(text, candidates)``."""
    score: Callable[..., Any] | None = getattr(scorer, "score", None)
    if not callable(score) or not isinstance(getattr(scorer, "name", None), str):
        raise ConfigError(
            f"{where} got {type(scorer).__name__} {brief(scorer)}, which is not a scorer; "
            "pass KeywordScorer() or an object with name and score(text, candidates)"
        )


def check_policy(where: str, policy: object) -> None:
    if policy is not None:
        check_instance(where, policy, RoutingPolicy,
                       fix="pass RoutingPolicy(near_tie_margin=..., menu_size=...) or None")
