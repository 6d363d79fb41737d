"""Two experiments compared (``c`` on the experiments screen): regressions first, explained.

The items of A (the baseline) and B pair as ``footprint experiment compare``
pairs them (:mod:`lens.explain._experiment_compare`), and show at once:
regressed first, then improved, changed, unchanged; each with both passes,
the exact test's p, cost and latency deltas. Then each regressed item is
explained on a worker as the compare report explains it
(:func:`lens.explain._experiment_report.explained`: the first divergent decision,
and the piece of B whose removal gives A's verdict back — B's agent re-run);
the cause column reads ``…`` until then. The box under the list shows the item
under the cursor: both answers, the divergence, the cause and its note.
``enter`` shows the item's two runs side by side (:class:`PairScreen`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from footprint.events import Event
from lens.explain._experiment_compare import Comparison, ItemComparison
from lens.tui._base import LensFooter, LensHeader, Loader
from lens.tui._lines import VirtualList
from lens.tui._runs import RunLines
from lens.tui._sessions import LensListing
from lens.tui._state import GatedStore, LensState
from lens.tui._table import Cell, Column, TableLines

__all__ = ["COMPARE_COLUMNS", "CompareScreen", "PairScreen", "ordered", "side_lines"]

COMPARE_COLUMNS = (Column("item", 16), Column("change", 10), Column("A pass", 6, right=True),
                   Column("B pass", 6, right=True), Column("p", 6, right=True),
                   Column("cost Δ", 11, right=True), Column("ms Δ", 8, right=True),
                   Column("cause", 20))
_ORDER = {"regressed": 0, "improved": 1, "changed": 2, "unchanged": 3}
_CHANGE = {"regressed": Style(color="red", bold=True), "improved": Style(color="green"),
           "changed": Style(color="yellow"), "unchanged": Style(dim=True)}


def ordered(items: Iterable[ItemComparison]) -> list[ItemComparison]:
    """Regressed items first, then improved, changed, unchanged; each kind in item order."""
    return sorted(items, key=lambda i: _ORDER[i.change])


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"{value:+.4f}"


def item_cells(i: ItemComparison, explaining: bool) -> list[Cell]:
    if i.change != "regressed":
        cause = "—"
    elif explaining:
        cause = "…"
    elif i.cause_note is None:
        cause = "not explained"
    else:
        cause = i.cause or "none found"
    return [(i.item_id, None), (i.change, _CHANGE[i.change]), (f"{i.a_passed}/{i.pairs}", None),
            (f"{i.b_passed}/{i.pairs}", None), (f"{i.p_value:.3g}", None),
            (_money(i.cost_delta_usd), None), (f"{i.latency_delta_ms:+.0f}", None),
            (cause, Style(color="magenta", bold=True) if i.cause else None)]


def summary(c: Comparison) -> str:
    a, b = c.a.meta, c.b.meta
    return (f" A {a.name} · B {b.name} ({b.dataset} v{b.version}): {len(c.items)} items, "
            f"{c.count('regressed')} regressed, {c.count('improved')} improved, "
            f"{c.count('unchanged')} unchanged · sign test p = {c.p_value:.3g} · cost Δ "
            f"{_money(c.cost_delta_usd)} USD · latency Δ {c.latency_delta_ms:+.0f} ms")


def detail(i: ItemComparison, explaining: bool) -> Text:
    """The item under the cursor: answers, divergence, cause."""
    out = Text()
    out.append(f" {i.item_id} ", style="bold reverse")
    out.append(f" {i.change}", style=_CHANGE[i.change])
    out.append(f"\n A: {' '.join(str(i.a_answer or i.a_verdict).split())[:140]}")
    out.append(f"\n B: {' '.join(str(i.b_answer or i.b_verdict).split())[:140]}")
    if i.change == "regressed" and i.cause_note is None and not explaining:
        out.append("\n not explained (the hint line says why)", style="italic")
    elif i.change == "regressed":
        if explaining:
            out.append("\n explaining: re-running B without each piece it changed…",
                       style="italic")
        else:
            out.append(f"\n first divergence: {i.divergence or 'none (same decisions)'}")
            out.append("\n cause: ", style="bold")
            out.append(i.cause or "none named", style="bold magenta" if i.cause else "")
            out.append(f" ({i.cause_note})", style="dim")
    out.append("\n enter: the two runs side by side", style="dim")
    return out


def _compared(state: LensState, a: str, b: str) -> Comparison:
    from lens.explain._experiment_compare import compare_experiments
    from recorder._experiments import load_experiment

    store = GatedStore(state)
    return compare_experiments(load_experiment(store, a), load_experiment(store, b))


def _explained(state: LensState, a: str, b: str) -> tuple[Comparison | None, str]:
    """The comparison explained, or ``(None, why not)`` (a dataset or an experiment that
    does not load: the plain comparison stays on screen)."""
    from footprint._errors import FootprintError
    from lens.explain._experiment_report import explained

    try:
        return explained(GatedStore(state), a, b), ""
    except FootprintError as exc:
        return None, str(exc)


class CompareScreen(LensListing):
    """A against B, item by item, regressions first with their causes."""

    DEFAULT_CSS = """
    CompareScreen #detail { height: 7; background: $panel; }
    CompareScreen #hint { height: auto; max-height: 2; }
    """
    WHERE = "compare"
    COLUMNS = COMPARE_COLUMNS

    def __init__(self, state: LensState, a: str, b: str, *, follow: bool = False) -> None:
        super().__init__(state, follow=follow)
        self.a, self.b = a, b
        self.comparison: Comparison | None = None
        self.items: list[ItemComparison] = []
        self.explaining = True
        self.why_not = ""
        """Why the regressions could not be explained (empty: they were, or are being)."""

    def below(self) -> ComposeResult:
        yield Static("", id="detail")

    def reload(self) -> None:
        if self.comparison is not None:
            return
        super().reload()
        self.load("compare", partial(_compared, self.state, self.a, self.b), self._fill)
        self.load("explain", partial(_explained, self.state, self.a, self.b), self._explained)

    def _fill(self, comparison: Comparison) -> None:
        """The plain comparison: shown unless the explained one came first."""
        if self.explaining or self.why_not:
            self._show(comparison)

    def _explained(self, found: tuple[Comparison | None, str]) -> None:
        comparison, self.why_not = found
        self.explaining = False
        if comparison is None:
            if self.comparison is None:
                self.shown([], f" {self.why_not}")
                return
            self._show(self.comparison)
            return
        self._show(comparison)

    def _show(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.items = ordered(comparison.items)
        tail = " · explaining the regressions…" if self.explaining else ""
        if self.why_not:
            tail = f" · the regressions are not explained: {self.why_not}"
        self.shown([item_cells(i, self.explaining) for i in self.items],
                   summary(comparison) + tail)
        self._detail(self.query_one(TableLines).cursor)

    def _detail(self, index: int) -> None:
        box = self.query_one("#detail", Static)
        box.update(detail(self.items[index], self.explaining)
                   if 0 <= index < len(self.items) else Text(" no item paired", style="dim"))

    def on_virtual_list_moved(self, message: VirtualList.Moved) -> None:
        if self.items:
            self._detail(message.index)

    async def on_table_lines_chosen(self, message: TableLines.Chosen) -> None:
        await self.app.push_screen(PairScreen(self.state, self.items[message.index],
                                              follow=self.follow))


def side_lines(events: Sequence[Event], other: Sequence[Event], colour: str) -> Text:
    """A run folded into its decisions per iteration (``lens.playback._diff.view_of``); a
    line the other run has not is in ``colour``."""
    from lens.playback._diff import view_of

    mine, theirs = view_of(events), view_of(other)
    out = Text()
    out.append(f"declared: {', '.join(mine.declared) or 'nothing'}\n", style="dim")
    for number, aspects in mine.iterations.items():
        out.append(f"iteration {number}\n", style="bold")
        for aspect, values in aspects.items():
            seen = theirs.iterations.get(number, {}).get(aspect, [])
            for value in values:
                out.append(f"  {aspect}: {value}\n", style=colour if value not in seen else "")
    out.append("answer: ", style="bold")
    out.append(str(mine.answer), style=colour if mine.answer != theirs.answer else "")
    return out


class PairScreen(Loader):
    """An item's run in A and in B, side by side; ``a``/``b`` opens either run."""

    DEFAULT_CSS = """
    PairScreen #diff { height: auto; max-height: 8; background: $panel; }
    PairScreen Horizontal { height: 1fr; }
    PairScreen VerticalScroll { width: 1fr; border: round $primary-darken-2; }
    """
    BINDINGS = [Binding("escape", "back", "Back"), Binding("a", "open('a')", "Open A"),  # noqa: RUF012
                Binding("b", "open('b')", "Open B")]
    opens_runs = True

    def __init__(self, state: LensState, item: ItemComparison, *,
                 follow: bool = False) -> None:
        super().__init__()
        self.state, self.item, self.follow = state, item, follow

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "pair", follow=self.follow)
        yield Static(f" {self.item.item_id}: {self.item.change} · reading the two runs…",
                     id="diff")
        with Horizontal():
            with VerticalScroll(id="a"):
                yield Static("", id="a-lines")
            with VerticalScroll(id="b"):
                yield Static("", id="b-lines")
        yield LensFooter()

    def on_mount(self) -> None:
        self.query_one("#a", VerticalScroll).border_title = f"A {self.item.a_run}"
        self.query_one("#b", VerticalScroll).border_title = f"B {self.item.b_run}"
        self.load("pair", self._read, self._fill)

    def _read(self) -> tuple[Text, Text, str]:
        from lens.explain._experiment_cause import first_divergence

        store = GatedStore(self.state)
        a = store.events(self.item.a_run) if self.item.a_run else []
        b = store.events(self.item.b_run) if self.item.b_run else []
        if not a or not b:
            return Text(), Text(), "a run of the pair never started: nothing to compare"
        head = f"first divergence: {first_divergence(a, b) or 'none (the same decisions)'}"
        if self.item.cause:
            head += f"\n cause: {self.item.cause} ({self.item.cause_note})"
        return side_lines(a, b, "red"), side_lines(b, a, "green"), head

    def _fill(self, found: tuple[Text, Text, str]) -> None:
        a, b, head = found
        self.query_one("#a-lines", Static).update(a)
        self.query_one("#b-lines", Static).update(b)
        self.query_one("#diff", Static).update(f" {self.item.item_id}: {self.item.change} · "
                                               f"{head}")

    def action_open(self, which: str) -> None:
        run_id = self.item.a_run if which == "a" else self.item.b_run
        if run_id is None:
            self.notify(f"{which.upper()}'s try never started a run", severity="warning")
            return
        self.post_message(RunLines.Open(run_id))

    async def action_back(self) -> None:
        self.app.pop_screen()
