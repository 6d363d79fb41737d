"""The words a why report uses for its trials, one row per tier.

The re-run tier (``why --agent``) re-runs the agent's whole turn; the re-send
tier (``why --resend``) re-sends one recorded request. Everything else —
search, verdicts, report — is shared, so every sentence that names a trial
takes its words from the tier's row here instead of being reworded after.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Tier", "Words"]


@dataclass(frozen=True, slots=True)
class Words:
    """How one tier names its trials and its baseline."""

    trial: str
    """One trial: ``re-run`` / ``re-send``."""
    trials: str
    """Several: ``re-runs`` / ``re-sends``."""
    unchanged: str
    """What the baseline repeats unchanged: ``the unchanged agent`` / ``the unchanged request``."""


class Tier(Enum):
    """The two ways ``why`` makes trials, each with its :class:`Words`."""

    RERUN = Words(trial="re-run", trials="re-runs", unchanged="the unchanged agent")
    RESEND = Words(trial="re-send", trials="re-sends", unchanged="the unchanged request")

    @property
    def words(self) -> Words:
        value: Words = self.value
        return value
