"""The header every screen shows, and the base of the screens that show one run."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from lens.tui._state import LensState
from lens.tui._summary import clip

__all__ = ["LensHeader", "RunScreen", "header_text"]


def header_text(state: LensState, where: str, *, follow: bool = False) -> Text:
    """Line 1: the screen, run id, model, status; line 2: the answer (or the store's runs)."""
    text = Text()
    text.append(" footprint lens ", style="bold reverse")
    text.append(f" {where} ", style="bold")
    head = state.head
    if where == "runs" or head is None:
        text.append(f"· store {state.store_name} · {len(state.store.run_ids())} runs")
    else:
        colour = {"complete": "green", "failed": "red"}.get(head.status, "yellow")
        text.append(f"· run {head.run_id} · {head.model} · ")
        text.append(head.status, style=f"bold {colour}")
        text.append(f" · {head.events} events")
    if follow:
        text.append(" · following", style="bold cyan")
    if where != "runs" and head is not None:
        text.append("\n answer: ", style="bold")
        text.append(clip(head.answer if head.answer is not None else "(none yet)", 108),
                    style="italic")
    return text


class LensHeader(Static):
    """The top: which screen, which run, its status, and its answer."""

    DEFAULT_CSS = "LensHeader { height: auto; max-height: 2; background: $panel; }"

    def __init__(self, state: LensState, where: str, *, follow: bool = False) -> None:
        super().__init__(header_text(state, where, follow=follow))
        self.state, self.where, self.follow = state, where, follow

    def redraw(self) -> None:
        self.update(header_text(self.state, self.where, follow=self.follow))


class RunScreen(Screen[None]):
    """A screen about the selected run: header, body, footer; ``escape`` goes back a level."""

    NAME = "run"
    BINDINGS = [Binding("escape", "back", "Back")]  # noqa: RUF012

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, self.NAME, follow=self.follow)
        yield from self.body()
        yield Footer()

    def body(self) -> ComposeResult:
        yield from ()

    async def action_back(self) -> None:
        """Back to the run's timeline; from the timeline, back to the runs."""
        if self.NAME == "timeline":
            await self.app.run_action("runs")
        else:
            await self.app.run_action("show('timeline')")

    def reload(self) -> None:
        """The run changed on disk (``--follow``): redraw from the state."""
        self.query_one(LensHeader).redraw()
