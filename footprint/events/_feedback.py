"""Feedback on a run: a person's or a judge's score, recorded after the run as its own event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from footprint.events._envelope import EventBase

__all__ = ["AFTER_END_TYPES", "FeedbackRecorded"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedbackRecorded(EventBase):
    """A score attached to a run (the ``feedback.recorded`` event).

    ``name`` is the score's name (``helpful``, ``correct``…); ``value`` a
    number and/or ``label`` a category (at least one is set); ``comment``
    says why; ``by`` who or what gave it (a user id, ``judge:module:func``).
    It follows the run's terminal event in the run's chain: the one kind of
    record a run may gain after it ended (:data:`AFTER_END_TYPES`).
    """

    type: Literal["feedback.recorded"] = "feedback.recorded"
    name: str
    value: float | None = None
    label: str | None = None
    comment: str | None = None
    by: str | None = None


AFTER_END_TYPES: frozenset[str] = frozenset({"feedback.recorded"})
"""The type tags a run may record after its terminal event (``verify`` accepts only these)."""
