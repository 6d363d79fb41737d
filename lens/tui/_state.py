"""What the lens holds: the open store, the selected run, and lazily built views of it.

No Textual here: screens read this object, and ``--follow`` calls
:meth:`LensState.poll` once a second.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

from footprint._errors import ConfigError
from lens.tui._model import RunView, build_run

__all__ = ["RUN_COLUMNS", "LensState", "RunHead"]

RUN_COLUMNS = ("started", "run id", "status", "iters", "tokens", "model", "events", "answer")
_RUNS_SQL = (
    "SELECT strftime(started, '%Y-%m-%d %H:%M:%S'), run_id, status, iterations, tokens, "
    "model, events, answer FROM runs ORDER BY start_ns, run_id"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunHead:
    """The runs-view row of one run: enough for the header."""

    run_id: str
    status: str
    model: str
    answer: str | None
    events: int
    last_seq: int


class LensState:
    """The store and the selected run; the run's typed events load only when needed."""

    def __init__(self, store_path: str | os.PathLike[str] | None, run: str | None = None) -> None:
        from recorder import StoreWarning, open_store

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StoreWarning)
            self.store = open_store(store_path)
        self.warnings = [str(w.message) for w in caught]
        self.run_id: str | None = None
        self.head: RunHead | None = None
        self._view: RunView | None = None
        if run is not None:
            self.select(self.store.resolve_run(run))

    @property
    def store_name(self) -> str:
        return self.store.root.name or str(self.store.root)

    def runs(self) -> list[tuple[Any, ...]]:
        """One row per run, in ``RUN_COLUMNS`` order, oldest first."""
        return self.store.rows(_RUNS_SQL)

    def select(self, run_id: str) -> None:
        """Make ``run_id`` the selected run (its events load on first use)."""
        head = self._head(run_id)
        if head is None:
            raise ConfigError(f"no run {run_id!r} in the store; pick one from the runs table")
        self.run_id, self.head, self._view = run_id, head, None

    def _head(self, run_id: str) -> RunHead | None:
        found = self.store.rows(
            "SELECT status, model, answer, events, last_seq FROM runs WHERE run_id = ?", [run_id])
        if not found:
            return None
        status, model, answer, events, last_seq = found[0]
        return RunHead(run_id=run_id, status=str(status), model=str(model or "?"),
                       answer=answer, events=int(events), last_seq=int(last_seq))

    def view(self) -> RunView:
        """The selected run's timeline view, built once per change of the run."""
        if self.run_id is None:
            raise ConfigError("no run is selected; press enter on a run in the runs table")
        if self._view is None:
            self._view = build_run(self.run_id, self.store.events(self.run_id))
        return self._view

    def poll(self) -> bool:
        """Re-read the store; ``True`` when the selected run gained events or changed status."""
        self.store.refresh()
        if self.run_id is None or self.head is None:
            return False
        head = self._head(self.run_id)
        if head is None or head == self.head:
            return False
        self.head, self._view = head, None
        return True
