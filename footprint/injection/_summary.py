"""The counts and catalog the host puts on ``context.evaluated`` (spec §6)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from footprint.injection._evaluate import InjectionEvaluation
from footprint.injection._types import Injection

__all__ = ["NO_DESCRIPTION", "EvaluationSummary", "summarize_evaluation"]

NO_DESCRIPTION = "(no description)"


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationSummary:
    """One evaluation, counted.

    ``trigger_kind_counts`` counts the ACTIVE injections per trigger kind, in
    first-seen order. ``skill_catalog`` lists every declared skill as
    ``(id, description or '(no description)')``, minus skills hidden on this pass.
    """

    evaluated_total: int
    active_count: int
    skipped_count: int
    active_ids: tuple[str, ...]
    skipped_ids: tuple[str, ...]
    trigger_kind_counts: tuple[tuple[str, int], ...]
    skill_catalog: tuple[tuple[str, str], ...]

    def kind_count(self, kind: str) -> int:
        """How many active injections have trigger ``kind`` (0 when none)."""
        return dict(self.trigger_kind_counts).get(kind, 0)


def _kind_of(inj: Injection) -> str:
    kind = getattr(inj.trigger, "kind", None)
    return kind if isinstance(kind, str) else "unknown"


def summarize_evaluation(
    injections: Sequence[Injection], evaluation: InjectionEvaluation
) -> EvaluationSummary:
    """Count ``evaluation`` of ``injections`` for the ``context.evaluated`` event."""
    counts: dict[str, int] = {}
    for inj in evaluation.active:
        kind = _kind_of(inj)
        counts[kind] = counts.get(kind, 0) + 1
    hidden = {s.id for s in evaluation.skipped if s.reason == "hidden"}
    catalog = tuple(
        (inj.id, inj.description or NO_DESCRIPTION)
        for inj in injections
        if inj.flavor == "skill" and inj.id not in hidden
    )
    return EvaluationSummary(
        evaluated_total=len(injections),
        active_count=len(evaluation.active),
        skipped_count=len(evaluation.skipped),
        active_ids=tuple(inj.id for inj in evaluation.active),
        skipped_ids=tuple(s.id for s in evaluation.skipped),
        trigger_kind_counts=tuple(counts.items()),
        skill_catalog=catalog,
    )
