"""The experiments screen (``E`` from the runs): each experiment, its results, two compared.

Lists the store's experiments (``recorder._experiments``: ``footprint
experiment run``), oldest first: name, dataset and version, runs, passed of
judged, mean latency, cost, agent. ``enter`` opens one: a line per item and
repeat with its verdict, pass, cost, latency, run and answer (or error);
``enter`` there opens the run's timeline. ``b`` marks the experiment under the
cursor as the baseline (A); ``c`` compares it with the one under the cursor
(B): :mod:`lens.tui._compare`. Files are read on workers.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from rich.style import Style
from textual.binding import Binding

from lens.tui._compare import CompareScreen
from lens.tui._runs import RunLines
from lens.tui._sessions import LensListing
from lens.tui._state import GatedStore, LensState
from lens.tui._table import Cell, Column, TableLines
from recorder._experiments import Experiment, ExperimentResult

__all__ = ["EXPERIMENT_COLUMNS", "RESULT_COLUMNS", "ExperimentScreen", "ExperimentsScreen",
           "read_experiments"]

EXPERIMENT_COLUMNS = (Column("", 1), Column("experiment", 24), Column("dataset", 16),
                      Column("runs", 5, right=True), Column("passed", 9, right=True),
                      Column("mean ms", 9, right=True), Column("cost", 10, right=True),
                      Column("created", 19), Column("agent", 12))
RESULT_COLUMNS = (Column("item", 16), Column("rep", 3, right=True), Column("verdict", 18),
                  Column("pass", 5), Column("cost", 10, right=True),
                  Column("ms", 8, right=True), Column("run id", 14),
                  Column("answer / error", 20))
_PASS = {True: ("yes", Style(color="green")), False: ("no", Style(color="red", bold=True)),
         None: ("—", Style(dim=True))}
_MARK = Style(color="yellow", bold=True)


def read_experiments(state: LensState) -> tuple[list[Experiment], list[str]]:
    """Every experiment of the store (``recorder._experiments.Experiment``), oldest first;
    one that does not load is left out with a notice (its name and why)."""
    from footprint._errors import FootprintError
    from recorder._experiments import experiment_names, load_experiment

    root: os.PathLike[str] = GatedStore(state)
    found: list[Experiment] = []
    bad: list[str] = []
    for name in experiment_names(root):
        try:
            found.append(load_experiment(root, name))
        except FootprintError as exc:
            bad.append(f"{name}: {exc}")
    return found, bad


def _cost(total: float | None) -> str:
    return "unknown" if total is None else f"${total:.4f}"


def experiment_cells(e: Experiment, baseline: str | None) -> list[Cell]:
    results = e.results
    passed = sum(1 for r in results if r.passed)
    judged = sum(1 for r in results if r.passed is not None)
    costs = [r.cost_usd for r in results]
    total = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    mean = sum(r.latency_ms for r in results) / len(results) if results else 0.0
    made = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(e.created_ns / 1e9))
    mark = "A" if e.meta.name == baseline else ""
    module, sep, attr = e.meta.agent.rpartition(":")
    agent = f"{Path(module).name}{sep}{attr}" if sep else e.meta.agent
    return [(mark, _MARK), (e.meta.name, None), (f"{e.meta.dataset} v{e.meta.version}", None),
            (str(len(results)), None), (f"{passed}/{judged}", None), (f"{mean:.0f}", None),
            (_cost(total), None), (made, None), (agent, Style(dim=True))]


def result_cells(r: ExperimentResult) -> list[Cell]:
    shown, style = _PASS[r.passed]
    said = r.answer if r.error is None else f"✗ {r.error}"
    return [(r.item_id, None), (str(r.repeat), None), (r.verdict, None), (shown, style),
            ("unknown" if r.cost_usd is None else f"${r.cost_usd:.4f}", None),
            (f"{r.latency_ms:.0f}", None), (r.run_id or "—", None),
            (said or "—", Style(color="red") if r.error else None)]


class ExperimentsScreen(LensListing):
    """The store's experiments; ``enter`` opens one, ``b`` marks A, ``c`` compares."""

    WHERE = "experiments"
    COLUMNS = EXPERIMENT_COLUMNS
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "back", "Back"),
        Binding("b", "baseline", "Baseline (A)"),
        Binding("c", "compare", "Compare with A"),
    ]
    HINT = " enter: the experiment's results · b: mark the baseline (A) · c: compare A with it"

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__(state, follow=follow)
        self.experiments: list[Experiment] = []
        self.baseline: str | None = None

    def reload(self) -> None:
        super().reload()
        self.load("experiments", lambda: read_experiments(self.state), self._fill)

    def _fill(self, found: tuple[list[Experiment], list[str]]) -> None:
        self.experiments, bad = found
        for problem in bad:
            self.notify(f"experiment left out: {problem}", severity="warning")
        self._redraw()

    def _redraw(self) -> None:
        rows = [experiment_cells(e, self.baseline) for e in self.experiments]
        hint = self.HINT if rows else (" no experiments: footprint experiment run DATASET "
                                       "--agent FILE.py:FACTORY makes one")
        if self.baseline is not None:
            hint = f" baseline A: {self.baseline} · c on another compares · {self.HINT[1:]}"
        self.shown(rows, hint)

    def _under_cursor(self) -> Experiment | None:
        index = self.query_one(TableLines).cursor
        return self.experiments[index] if 0 <= index < len(self.experiments) else None

    def action_baseline(self) -> None:
        chosen = self._under_cursor()
        if chosen is not None:
            self.baseline = chosen.meta.name
            self._redraw()

    async def action_compare(self) -> None:
        chosen = self._under_cursor()
        if chosen is None:
            return
        if self.baseline is None or self.baseline == chosen.meta.name:
            self.notify("mark the baseline first: b on experiment A, then c on experiment B",
                        severity="warning")
            return
        await self.app.push_screen(CompareScreen(self.state, self.baseline, chosen.meta.name,
                                                 follow=self.follow))

    async def on_table_lines_chosen(self, message: TableLines.Chosen) -> None:
        chosen = self.experiments[message.index]
        await self.app.push_screen(ExperimentScreen(self.state, chosen, follow=self.follow))


class ExperimentScreen(LensListing):
    """One experiment's results, item by item; ``enter`` opens the run."""

    WHERE = "experiment"
    COLUMNS = RESULT_COLUMNS

    def __init__(self, state: LensState, experiment: Experiment, *,
                 follow: bool = False) -> None:
        super().__init__(state, follow=follow)
        self.experiment = experiment

    def reload(self) -> None:
        e = self.experiment
        passed = sum(1 for r in e.results if r.passed)
        judged = sum(1 for r in e.results if r.passed is not None)
        self.shown([result_cells(r) for r in e.results],
                   f" {e.meta.name}: {e.meta.dataset} v{e.meta.version}, {passed}/{judged} "
                   f"passed ({e.meta.comparator}) · enter: open the run's timeline")

    def on_table_lines_chosen(self, message: TableLines.Chosen) -> None:
        message.stop()
        run_id = self.experiment.results[message.index].run_id
        if run_id is None:
            self.notify("this try never started a run: nothing to open", severity="warning")
            return
        self.post_message(RunLines.Open(run_id))
