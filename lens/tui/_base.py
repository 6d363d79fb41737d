"""The header every screen shows, and the base of the screens that show one run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import NoActiveWorker, Worker, WorkerState, get_current_worker

from lens.tui._reader import ReaderClosed
from lens.tui._state import LensState
from lens.tui._summary import clip

__all__ = ["LensFooter", "LensHeader", "Loader", "RunScreen", "header_text", "update_fitted",
           "worker_cancelled"]

T = TypeVar("T")


def worker_cancelled() -> bool:
    """Inside a worker: has it been cancelled (screen left, newer request, app closing)?"""
    try:
        return get_current_worker().is_cancelled
    except NoActiveWorker:
        return False


def update_fitted(box: Static, content: Text) -> None:
    """``box.update(content)``; the screen is laid out again only when the content's
    height at the box's width changes (a layout of a screen costs ~30 ms, more than
    the rest of a key press). For boxes whose height follows their content."""
    before = box.content_region
    box.update(content, layout=False)
    if before.width <= 0 or box.get_content_height(
            box.container_size, box.app.size, before.width) != before.height:
        box.refresh(layout=True)


class LensFooter(Footer):
    """Textual's footer, rebuilt only when the keys it shows change.

    The stock footer rebuilds its keys whenever the screen's bindings are
    refreshed: on every focus change, so several times while a screen opens,
    each rebuild restyling every key (~20 ms each; most of opening a screen).
    """

    _shown: tuple[tuple[str, str, str, bool, str], ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        shown = tuple(
            (b.key, b.description, self.app.get_key_display(b), enabled, tooltip)
            for _node, b, enabled, tooltip in screen.active_bindings.values() if b.show)
        if shown == self._shown:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = shown  # the stock footer recomposes now
        super().bindings_changed(screen)


class Loader(Screen[None]):
    """A screen that reads the store on thread workers and draws the result on the UI thread.

    Nothing is focused until the screen's list has loaded (a loading widget cannot take focus).
    """

    AUTO_FOCUS = ""

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[Worker[Any], Callable[[Any], None]] = {}

    def load(self, group: str, work: Callable[[], T], done: Callable[[T], None]) -> Worker[T]:
        """Run ``work`` on a thread; ``done(result)`` on the UI thread (a newer load of the same
        ``group`` makes an older one's result go unused)."""
        worker: Worker[T] = self.run_worker(self._noticing(work), name=group, group=group,
                                            thread=True, exclusive=True, exit_on_error=False)
        self._done[worker] = done
        return worker

    def _noticing(self, work: Callable[[], T]) -> Callable[[], T]:
        """``work``, then a notice naming each file it found damaged (the reader left it out:
        its warning alone would never reach the screen)."""
        state = getattr(self, "state", None)
        if not isinstance(state, LensState):
            return work

        def run() -> T:
            result = work()
            for notice in state.damage_notices():
                self.app.call_from_thread(self.app.notify, notice, title="store warning",
                                          severity="warning")
            return result

        return run

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        done = self._done.pop(worker, None)
        if done is None or not self.is_attached:
            return
        if event.state == WorkerState.SUCCESS and not worker.is_cancelled:
            done(worker.result)
        elif event.state == WorkerState.ERROR and not isinstance(worker.error, ReaderClosed):
            self.notify(f"could not read the store: {worker.error}", severity="error")


_STORE_WIDE = ("runs", "trends", "sessions", "session", "experiments", "experiment",
               "compare", "pair")  # screens about the whole store, not the selected run


def header_text(state: LensState, where: str, *, follow: bool = False) -> Text:
    """Line 1: the screen, run id, model, status; line 2: the answer (or the store's runs)."""
    text = Text()
    text.append(" footprint lens ", style="bold reverse")
    text.append(f" {where} ", style="bold")
    head = state.head
    if where in _STORE_WIDE or head is None:
        text.append(f"· store {state.store_name} · {state.run_count} runs")
        if where == "runs" and state.where:
            text.append(f", {state.listed} match the filter", style="bold")
    else:
        colour = {"complete": "green", "failed": "red"}.get(head.status, "yellow")
        text.append(f"· run {head.run_id} · {head.model} · ")
        text.append(head.status, style=f"bold {colour}")
        text.append(f" · {head.events} events")
        if head.source:
            text.append(f" · {head.source}", style="bold magenta")
    if follow:
        text.append(" · following", style="bold cyan")
    if where not in _STORE_WIDE and head is not None:
        text.append("\n answer: ", style="bold")
        none = "(none — the run failed)" if head.status == "failed" else "(none yet)"
        text.append(clip(head.answer if head.answer is not None else none, 108),
                    style="italic")
        if head.flag is not None:
            text.append(f"  ⚠ {clip(head.flag, 60)}", style="bold red")
    return text


class LensHeader(Static):
    """The top: which screen, which run, its status, and its answer."""

    DEFAULT_CSS = "LensHeader { height: auto; max-height: 2; background: $panel; }"

    def __init__(self, state: LensState, where: str, *, follow: bool = False) -> None:
        super().__init__(header_text(state, where, follow=follow))
        self.state, self.where, self.follow = state, where, follow

    def redraw(self) -> None:
        self.update(header_text(self.state, self.where, follow=self.follow))


class RunScreen(Loader):
    """A screen about the selected run: header, body, footer; ``escape`` goes back a level."""

    NAME = "run"
    BINDINGS = [Binding("escape", "back", "Back")]  # noqa: RUF012

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, self.NAME, follow=self.follow)
        yield from self.body()
        yield LensFooter()

    def body(self) -> ComposeResult:
        yield from ()

    async def action_back(self) -> None:
        """Back to the run's timeline; from the timeline, back to the runs."""
        if self.NAME == "timeline":
            await self.app.run_action("leave_run")
        else:
            await self.app.run_action("show('timeline')")

    def reload(self) -> None:
        """The run changed on disk (``--follow``): redraw from the state."""
        self.query_one(LensHeader).redraw()
