"""What the search and the verdicts need from whatever makes the trials.

Two makers satisfy it: :class:`lens.explain._rerun.Rerunner` (re-runs the
agent's turn, the re-run tier) and :class:`lens.explain._resend.Resender`
(re-sends the recorded request of one model call, the re-send tier). The
search (:mod:`lens.explain._search`), the baseline and the verdicts
(:mod:`lens.explain._why`) are written against this protocol only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from lens.explain._candidates import Removal
from lens.explain._outcome import Comparator
from lens.explain._past import Past
from lens.explain._rerun import Rerun
from lens.explain._tier import Tier

__all__ = ["Trial"]


class Trial(Protocol):
    """Makes one trial with some removals and counts what it spent."""

    @property
    def tier(self) -> Tier:
        """Which tier the trials are (its words name them in the report)."""
        ...

    @property
    def budget(self) -> int | None: ...

    @property
    def comparator(self) -> Comparator: ...

    @property
    def recorded_key(self) -> str: ...

    @property
    def past(self) -> Past: ...

    @property
    def runs(self) -> int: ...

    @property
    def made(self) -> int: ...

    @property
    def saved(self) -> int: ...

    @property
    def blind(self) -> Sequence[tuple[str, str]]: ...

    @property
    def wording(self) -> Mapping[frozenset[Removal], Sequence[str]]: ...


    def rerun(self, removals: Sequence[Removal], seed: int, *, live: bool = False,
              what: str = "") -> Rerun:
        """One trial without ``removals`` on ``seed`` (``BudgetSpent`` when spent)."""
        ...

    def use(self, comparator: Comparator) -> None:
        """Compare trials by ``comparator`` from now on."""
        ...

    def removable(self, removal: Removal) -> str | None:
        """``None`` when ``removal`` can be made, else why not."""
        ...

    def cassette_ok(self) -> bool:
        """Whether recorded responses may serve unchanged calls."""
        ...
