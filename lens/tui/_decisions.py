"""The decisions screen: every event of the run, one line each, filterable by type prefix.

The list holds only an index (seq and type: a few MB for a million events),
read on a worker when the screen opens; the key fields of the rows on screen,
and the payload of the row under the cursor, are fetched as they are needed.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Input, Static

from lens.tui._base import RunScreen
from lens.tui._eventlist import EventLines
from lens.tui._lines import VirtualList
from lens.tui._rows import COLUMNS, EventRows
from lens.tui._summary import clip

__all__ = ["DecisionsScreen"]

_PAGE = 128
_REST_S = 0.08


class DecisionsScreen(RunScreen):
    """``/`` focuses the filter; ``enter`` in it moves to the list; the bottom shows the payload."""

    NAME = "decisions"
    DEFAULT_CSS = """
    DecisionsScreen #count { height: 1; color: $text-muted; }
    DecisionsScreen #payload { height: 7; border-top: solid $panel; }
    """
    BINDINGS = [Binding("slash", "filter", "Filter", key_display="/")]  # noqa: RUF012

    def body(self) -> ComposeResult:
        yield Input(placeholder="filter by type prefix: skill.  context.injected  llm tool "
                                "(space-separated, any matches)", id="filter")
        yield Static(id="count")
        yield EventLines(id="events")
        yield Static(id="payload")

    @property
    def rows(self) -> EventRows:
        return self.query_one(EventLines).rows

    def on_mount(self) -> None:
        self._payload_timer: Timer | None = None
        self.reader = self.state.reader()
        lines = self.query_one(EventLines)
        lines.on_missing = self._want_rows
        lines.focus()
        self._read_index(first=True)

    def _read_index(self, *, first: bool) -> None:
        lines = self.query_one(EventLines)
        if first:
            lines.loading = True
            total = self.state.head.events if self.state.head is not None else 0
            self.query_one("#count", Static).update(f" reading the index of {total:,} events…",
                                                    layout=False)
        reader = self.reader
        self.load("index", lambda: EventRows.from_index(*reader.index(), grouped=True),
                  self._index_read)

    def _index_read(self, rows: EventRows) -> None:
        rows.filter(self.query_one(Input).value)
        lines = self.query_one(EventLines)
        lines.rows = rows
        lines.loading = False
        if self.focused is None:
            lines.focus()
        lines.reset()
        self._count()

    def _count(self) -> None:
        shown, total = len(self.rows), self.rows.total
        what = f" matching {' | '.join(self.rows.prefixes)}" if self.rows.prefixes else ""
        self.query_one("#count", Static).update(f" {shown:,} of {total:,} events{what}",
                                                layout=False)  # one line: never resized

    def _want_rows(self, first: int, last: int) -> None:
        rows, lines = self.rows, self.query_one(EventLines)
        seqs = rows.missing(first, max(last, first + _PAGE))
        if not seqs:
            return
        reader = self.reader

        def done(found: list[tuple[object, ...]]) -> None:
            rows.fill(found)
            lines.refresh()

        self.load("rows", lambda: reader.rows_at(COLUMNS, seqs), done)

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter; the new list replaces the old one when its first rows are here (one paint)."""
        view = self.rows.filtered(event.value)
        seqs = view.missing(0, _PAGE)
        if not seqs:
            self._use(view)
            return
        reader = self.reader

        def done(found: list[tuple[object, ...]]) -> None:
            view.fill(found)
            self._use(view)

        self.load("rows", lambda: reader.rows_at(COLUMNS, seqs), done)

    def _use(self, view: EventRows) -> None:
        lines = self.query_one(EventLines)
        lines.rows = view
        lines.reset()
        self._count()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(EventLines).focus()

    def action_filter(self) -> None:
        self.query_one(Input).focus()

    def on_virtual_list_moved(self, event: VirtualList.Moved) -> None:
        self._show_payload(event.index)
        self._read_ahead()

    def _read_ahead(self) -> None:
        """Fetch the rows a screen above and two below, before a page key needs them."""
        rows, lines = self.rows, self.query_one(EventLines)
        first, last = lines.visible_range()
        height = max(1, last - first + 1)
        seqs = rows.missing(last + 1, last + 2 * height) + rows.missing(first - height, first - 1)
        if seqs:
            reader = self.reader
            self.load("ahead", lambda: reader.rows_at(COLUMNS, seqs), rows.fill)

    def _show_payload(self, index: int) -> None:
        """The payload of the row under the cursor, once the cursor rests (keys stay quick)."""
        if self._payload_timer is not None:
            self._payload_timer.stop()
        self._payload_timer = self.set_timer(_REST_S, lambda: self._read_payload(index))

    def _read_payload(self, index: int) -> None:
        self._payload_timer = None
        box = self.query_one("#payload", Static)
        if index >= len(self.rows):
            box.update(Text("(no event)", style="dim"), layout=False)
            return
        seq, kind = self.rows.seq(index), self.rows.type_of(index)
        reader = self.reader

        def done(payload: str | None) -> None:
            try:
                pretty = json.dumps(json.loads(payload or "{}"), ensure_ascii=False,
                                    sort_keys=True)
            except (TypeError, ValueError):
                pretty = str(payload)
            text = Text(f"seq {seq} {kind} payload\n", style="bold")
            text.append(clip(pretty, 600))
            box.update(text, layout=False)  # a fixed 7 lines: never resized

        self.load("payload", lambda: reader.payload(seq), done)

    def reload(self) -> None:
        super().reload()
        self._read_index(first=False)
