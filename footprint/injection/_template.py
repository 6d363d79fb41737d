"""Prompt templates over a closed vocabulary of run-time facts (spec §1.4).

A template names facts as ``{{ name }}``. Only three exist: ``action`` (the
iteration), ``actionBudget`` (``max_iterations``) and ``actionsRemaining``
(``max(0, max_iterations - iteration)``). Rendering is all-or-nothing: a
template whose facts cannot all be supplied renders to ``None`` and is
never shown half-filled, so a literal ``{{x}}`` never reaches the model.
"""

from __future__ import annotations

import re
from typing import Protocol

from footprint._errors import ConfigError, did_you_mean

__all__ = [
    "TEMPLATE_FACTS",
    "FactSource",
    "check_template",
    "missing_facts",
    "render_template",
    "template_names",
]

TEMPLATE_FACTS: tuple[str, ...] = ("action", "actionBudget", "actionsRemaining")
_NEEDS_BUDGET = frozenset({"actionBudget", "actionsRemaining"})
_KNOWN = frozenset(TEMPLATE_FACTS)

# Every ``{{...}}`` is read as a placeholder; one whose inside is not a
# known fact (``{{foo}}``, ``{{ a-b }}``) is unknown, never left in the text.
_BRACES = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


class FactSource(Protocol):
    """What rendering reads: the iteration and the (optional) action budget."""

    @property
    def iteration(self) -> int: ...

    @property
    def max_iterations(self) -> int | None: ...


def template_names(text: str) -> tuple[str, ...]:
    """The placeholder names in ``text`` (inner text, stripped), first first, deduped."""
    return tuple(dict.fromkeys(inner.strip() for inner in _BRACES.findall(text)))


def check_template(where: str, text: str) -> bool:
    """Refuse any ``{{...}}`` outside the vocabulary; return whether any placeholder exists."""
    allowed = ", ".join(f"{{{{{name}}}}}" for name in TEMPLATE_FACTS)
    found = False
    for match in _BRACES.finditer(text):
        found = True
        inner = match.group(1).strip()
        if inner in _KNOWN:
            continue
        hint = did_you_mean(inner, TEMPLATE_FACTS)
        raise ConfigError(
            f"{where}: prompt_template names {match.group(0)!r}, which is not a "
            f"run-time fact{hint}; the only facts are {allowed}. Use one of them, "
            f"or pass the text as prompt=... if it is not a template."
        )
    return found


def missing_facts(names: tuple[str, ...], source: FactSource | None) -> tuple[str, ...]:
    """The names in ``names`` this source cannot supply (all of them without a source)."""
    if source is None:
        return names
    has_budget = source.max_iterations is not None
    return tuple(
        name
        for name in names
        if name not in _KNOWN or (name in _NEEDS_BUDGET and not has_budget)
    )


def _fact_value(name: str, iteration: int, budget: int | None) -> int:
    if name == "action":
        return iteration
    assert budget is not None  # guarded by missing_facts
    if name == "actionBudget":
        return budget
    return max(0, budget - iteration)


def render_template(text: str, source: FactSource | None) -> str | None:
    """Render every placeholder, or return ``None`` when any fact is missing."""
    if source is None or missing_facts(template_names(text), source):
        return None
    iteration = source.iteration
    budget = source.max_iterations
    return _BRACES.sub(
        lambda m: str(_fact_value(m.group(1).strip(), iteration, budget)), text
    )
