"""The decisions screen: every event of the run, one line each, filterable by type prefix."""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static

from lens.tui._base import RunScreen
from lens.tui._eventlist import EventLines
from lens.tui._rows import EventRows
from lens.tui._summary import clip

__all__ = ["DecisionsScreen"]


class DecisionsScreen(RunScreen):
    """``/`` focuses the filter; ``enter`` in it moves to the list; the bottom shows the payload."""

    NAME = "decisions"
    DEFAULT_CSS = """
    DecisionsScreen #count { height: 1; color: $text-muted; }
    DecisionsScreen #payload { height: 7; border-top: solid $panel; }
    """
    BINDINGS = [Binding("slash", "filter", "Filter", key_display="/")]  # noqa: RUF012

    def body(self) -> ComposeResult:
        assert self.state.run_id is not None
        self.rows = EventRows.load(self.state.store, self.state.run_id)
        yield Input(placeholder="filter by type prefix: skill.  context.injected  llm tool "
                                "(space-separated, any matches)", id="filter")
        yield Static(id="count")
        yield EventLines(self.rows, id="events")
        yield Static(id="payload")

    def on_mount(self) -> None:
        self._count()
        self.query_one(EventLines).focus()
        self._show_payload(0)

    def _count(self) -> None:
        shown, total = len(self.rows), self.rows.total
        what = f" matching {' | '.join(self.rows.prefixes)}" if self.rows.prefixes else ""
        self.query_one("#count", Static).update(f" {shown:,} of {total:,} events{what}")

    def on_input_changed(self, event: Input.Changed) -> None:
        self.rows.filter(event.value)
        self.query_one(EventLines).reset()
        self._count()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(EventLines).focus()

    def action_filter(self) -> None:
        self.query_one(Input).focus()

    def on_event_lines_moved(self, event: EventLines.Moved) -> None:
        self._show_payload(event.index)

    def _show_payload(self, index: int) -> None:
        box = self.query_one("#payload", Static)
        if index >= len(self.rows) or self.state.run_id is None:
            box.update(Text("(no event)", style="dim"))
            return
        seq = self.rows.seq(index)
        found = self.state.store.rows(
            "SELECT payload FROM events WHERE run_id = ? AND seq = ?", [self.state.run_id, seq])
        payload = found[0][0] if found else "{}"
        try:
            pretty = json.dumps(json.loads(payload), ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            pretty = str(payload)
        text = Text(f"seq {seq} {self.rows.type_of(index)} payload\n", style="bold")
        text.append(clip(pretty, 600))
        box.update(text)

    def reload(self) -> None:
        super().reload()
        assert self.state.run_id is not None
        keep = self.query_one(Input).value
        self.rows = EventRows.load(self.state.store, self.state.run_id)
        self.rows.filter(keep)
        lines = self.query_one(EventLines)
        lines.rows = self.rows
        lines.reset()
        self._count()
