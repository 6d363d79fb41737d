"""What the check-up reports: one problem per finding, and the report itself."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["Checkup", "GraphProblem", "ProblemKind"]

ProblemKind: TypeAlias = Literal["error", "warning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphProblem:
    """One finding of the check-up.

    ``kind`` is ``error`` (makes the check-up fail) or ``warning``; ``code``
    is a stable kebab-case name; ``skill``/``from_skill``/``to`` say which
    skill or edge it concerns and ``example`` which example text, when any.
    """

    kind: ProblemKind
    code: str
    message: str
    skill: str | None = None
    from_skill: str | None = None
    to: str | None = None
    example: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkup:
    """The check-up's verdict: ``ok`` is false iff any problem is an error.

    ``notes`` is non-empty only when examples or never-routes phrases were
    checked: it says that silence there is not proof of coverage.
    """

    ok: bool
    problems: tuple[GraphProblem, ...]
    notes: tuple[str, ...] = ()

    @classmethod
    def of(cls, problems: Iterable[GraphProblem], notes: Iterable[str] = ()) -> Checkup:
        found = tuple(problems)
        return cls(
            ok=not any(p.kind == "error" for p in found),
            problems=found,
            notes=tuple(notes),
        )

    @property
    def errors(self) -> tuple[GraphProblem, ...]:
        return tuple(p for p in self.problems if p.kind == "error")

    @property
    def warnings(self) -> tuple[GraphProblem, ...]:
        return tuple(p for p in self.problems if p.kind == "warning")

    def codes(self) -> tuple[str, ...]:
        """The problem codes in report order (handy in tests and the CLI)."""
        return tuple(p.code for p in self.problems)
