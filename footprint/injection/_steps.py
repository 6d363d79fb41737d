"""Stepped-skill declarations and the artifact vocabulary, checked at definition.

A skill may declare a procedure (``steps``) and what it produces and
consumes (spec §2.9 and §4). Both are declarations: nothing at run time
reads the vocabulary, and the step pointer lives with the host. What this
module owns is the *shape* and every refusal that can be made where the
declaration is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from footprint._errors import ConfigError

__all__ = ["OnSkip", "SkillStep", "check_kinds", "check_steps"]

OnSkip: TypeAlias = Literal["advance", "hold"]
_ON_SKIP: tuple[OnSkip, ...] = ("advance", "hold")


@dataclass(frozen=True, slots=True)
class SkillStep:
    """One step of a skill's declared procedure: the tool to run and a note.

    ``produces`` / ``consumes`` are the step's artifact kinds (spec §4).
    """

    tool: str
    note: str
    produces: tuple[str, ...] | None = None
    consumes: tuple[str, ...] | None = None


def check_kinds(where: str, what: str, kinds: object) -> tuple[str, ...] | None:
    """Validate one ``produces``/``consumes`` declaration; return it as a tuple.

    Refuses a non-list, an empty list, a non-string or blank kind and a
    duplicate kind. ``where`` starts the message (``define_skill(billing)``,
    plus `` step 2`` for a step).
    """
    if kinds is None:
        return None
    if not isinstance(kinds, list | tuple):
        raise ConfigError(
            f"{where}: {what} must be a list of artifact kinds, got {kinds!r}; "
            f"write {what}=[{kinds!r}] or drop the field."
        )
    if not kinds:
        raise ConfigError(
            f"{where}: {what}=[] declares nothing; list at least one kind "
            f"(e.g. 'dataset/rows') or drop the field."
        )
    seen: set[str] = set()
    for kind in kinds:
        if not isinstance(kind, str) or not kind.strip():
            raise ConfigError(
                f"{where}: {what} contains {kind!r}; every kind must be a non-blank "
                f"string such as 'dataset/rows'."
            )
        if kind in seen:
            raise ConfigError(
                f"{where}: {what} lists {kind!r} twice; declare each kind once."
            )
        seen.add(kind)
    return tuple(kinds)


def _coerce_step(where: str, raw: object) -> SkillStep:
    if isinstance(raw, SkillStep):
        return raw
    if isinstance(raw, Mapping):
        unknown = sorted(set(raw) - {"tool", "note", "produces", "consumes"})
        if unknown:
            raise ConfigError(
                f"{where}: unknown step field(s) {unknown!r}; a step takes "
                f"tool, note, produces and consumes."
            )
        return SkillStep(
            tool=raw.get("tool"),  # type: ignore[arg-type]  # checked by check_steps
            note=raw.get("note"),  # type: ignore[arg-type]
            produces=raw.get("produces"),
            consumes=raw.get("consumes"),
        )
    raise ConfigError(
        f"{where}: a step must be SkillStep(tool=..., note=...), got {raw!r}."
    )


def _check_step(
    skill_where: str, index: int, step: SkillStep, tool_names: frozenset[str]
) -> SkillStep:
    where = f"{skill_where} step {index}"
    for label, value in (("tool", step.tool), ("note", step.note)):
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(
                f"{where}: {label} is {value!r}; give the step a non-blank {label}."
            )
    if step.tool not in tool_names:
        raise ConfigError(
            f"{where}: tool {step.tool!r} is not one of this skill's tools "
            f"{sorted(tool_names)!r}; add it to tools=... or name one of those."
        )
    return SkillStep(
        tool=step.tool,
        note=step.note,
        produces=check_kinds(where, "produces", step.produces),
        consumes=check_kinds(where, "consumes", step.consumes),
    )


def check_steps(
    where: str,
    steps: Iterable[object] | None,
    on_skip: object,
    tool_names: frozenset[str],
) -> tuple[tuple[SkillStep, ...] | None, OnSkip | None]:
    """Validate a skill's procedure (spec §2.9 "Refused at definition")."""
    if steps is None:
        if on_skip is not None:
            raise ConfigError(
                f"{where}: on_skip={on_skip!r} without steps; declare steps=[...] "
                f"or drop on_skip."
            )
        return None, None
    if isinstance(steps, str | bytes | Mapping):
        raise ConfigError(
            f"{where}: steps must be a list of SkillStep, got {steps!r}."
        )
    items = [_coerce_step(where, raw) for raw in steps]
    if not items:
        raise ConfigError(
            f"{where}: steps=[] declares no procedure; list at least one "
            f"SkillStep or drop steps."
        )
    if not tool_names:
        raise ConfigError(
            f"{where}: steps need tools, but the skill has none; pass tools=[...] "
            f"naming every step's tool."
        )
    if on_skip is not None and on_skip not in _ON_SKIP:
        raise ConfigError(
            f"{where}: on_skip={on_skip!r}; use 'advance' (the default) or 'hold'."
        )
    checked = tuple(
        _check_step(where, n, step, tool_names) for n, step in enumerate(items, start=1)
    )
    policy: OnSkip = "hold" if on_skip == "hold" else "advance"
    return checked, policy
