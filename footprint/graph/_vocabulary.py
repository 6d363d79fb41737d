"""Skill vocabulary (spec §4, seed 001): what skills produce and consume.

Declarations only: nothing at run time reads them. The check proves one
strong thing — *nothing on this agent claims to make what this consumer
claims to need* — and says in every warning what it cannot see.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from footprint.graph._problems import GraphProblem
from footprint.graph._steps import as_kinds, step_field
from footprint.injection._types import Injection, SkillTool

__all__ = ["ArtifactVocabulary", "check_artifact_vocabularies", "vocabulary_of"]

_CODE = "artifact-kind-unsatisfied"


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactVocabulary:
    """The artifact kinds a skill (or a step) leaves behind and needs."""

    produces: tuple[str, ...] = ()
    consumes: tuple[str, ...] = ()


def vocabulary_of(injection: Injection) -> ArtifactVocabulary | None:
    """The skill-level vocabulary off the metadata bag; ``None`` when it declared none."""
    meta = injection.metadata
    if meta.get("produces") is None and meta.get("consumes") is None:
        return None
    return ArtifactVocabulary(
        produces=as_kinds(meta.get("produces")), consumes=as_kinds(meta.get("consumes"))
    )


def _steps_of(skill: Injection) -> tuple[object, ...]:
    raw = skill.metadata.get("steps")
    if raw is None or isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        return ()
    return tuple(raw)


def _declares_any(skill: Injection) -> bool:
    if vocabulary_of(skill) is not None:
        return True
    return any(
        step_field(s, "produces") is not None or step_field(s, "consumes") is not None
        for s in _steps_of(skill)
    )


def _wanted(tools: Iterable[SkillTool]) -> frozenset[str]:
    return frozenset(kind for t in tools for kind in (t.wants or {}).values())


def _produced(skills: Sequence[Injection]) -> frozenset[str]:
    kinds: set[str] = set()
    for skill in skills:
        kinds.update(as_kinds(skill.metadata.get("produces")))
        for step in _steps_of(skill):
            kinds.update(as_kinds(step_field(step, "produces")))
    return frozenset(kinds)


def _message(consumer: str, kind: str, produced: frozenset[str]) -> str:
    if produced:
        makes = "this agent produces only: " + ", ".join(repr(k) for k in sorted(produced))
    else:
        makes = "nothing on this agent declares `produces`"
    return (
        f"{consumer} consumes {kind!r}, but nothing on this agent produces it "
        f"({makes}). This check cannot see artifacts minted without a `produces` "
        "declaration, made in earlier runs, by other agents or by external jobs, and "
        "it does not reason about route order (read_skill can reach any open skill). "
        f"Fix: give a tool that redeems it `wants={{'<arg>': {kind!r}}}`, declare "
        f"`produces=[{kind!r}]` where it is made, or drop the `consumes` declaration. "
        "This is a warning, never an error."
    )


def _warn(skill_id: str, consumer: str, kind: str, produced: frozenset[str]) -> GraphProblem:
    return GraphProblem(
        kind="warning", code=_CODE, message=_message(consumer, kind, produced), skill=skill_id
    )


def _check_skill(skill: Injection, produced: frozenset[str]) -> list[GraphProblem]:
    own_wants = _wanted(skill.inject.tools)
    skill_consumes = as_kinds(skill.metadata.get("consumes"))
    found = [
        _warn(skill.id, f'Skill "{skill.id}"', k, produced)
        for k in skill_consumes
        if k not in produced and k not in own_wants
    ]
    earlier: set[str] = set()
    for index, step in enumerate(_steps_of(skill), start=1):
        tool = step_field(step, "tool")
        step_wants = _wanted(t for t in skill.inject.tools if t.schema.name == tool)
        for k in as_kinds(step_field(step, "consumes")):
            if k in produced or k in earlier or k in step_wants or k in skill_consumes:
                continue
            consumer = f"Step {index} of \"{skill.id}\" ('{tool}')"
            found.append(_warn(skill.id, consumer, k, produced))
        earlier.update(as_kinds(step_field(step, "produces")))
    return found


def check_artifact_vocabularies(skills: Sequence[Injection]) -> tuple[GraphProblem, ...]:
    """One ``artifact-kind-unsatisfied`` warning per unsatisfied (consumer, kind).

    Only flavor-``skill`` injections are checked, and the check returns ``()``
    at once when none declares a vocabulary. Kinds match exactly.
    """
    only = [s for s in skills if s.flavor == "skill"]
    if not any(_declares_any(s) for s in only):
        return ()
    produced = _produced(only)
    return tuple(p for s in only for p in _check_skill(s, produced))
