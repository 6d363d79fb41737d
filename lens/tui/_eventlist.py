"""A line-virtualized list of events: only the lines on screen are ever formatted.

``DataTable`` measures every cell before its first paint (seconds for 100k
rows); this widget is a ``ScrollView`` whose ``render_line`` formats the one
row asked for, so a million rows paint as fast as ten.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from lens.tui._rows import EventRows

__all__ = ["EventLines"]

_WIDTH = 160
_SEQ = Style(dim=True)
_STEP = Style(color="cyan")
_FIELDS = Style()
_CURSOR = Style(bgcolor="grey27", bold=True)
_TYPE_COLOURS = {
    "run": "bright_white", "iteration": "white", "context": "green", "skill": "magenta",
    "llm": "yellow", "tool": "bright_blue", "route": "cyan", "injection": "green",
}


def _type_style(kind: str) -> Style:
    return Style(color=_TYPE_COLOURS.get(kind.split(".", 1)[0], "white"), bold=True)


class EventLines(ScrollView, can_focus=True):
    """Rows of an :class:`EventRows`, a cursor, and nothing measured up front."""

    DEFAULT_CSS = "EventLines { height: 1fr; }"
    BINDINGS = [  # noqa: RUF012 (Textual's declared class attribute)
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "Top", show=False),
        Binding("end", "edge(1)", "Bottom", show=False),
    ]
    cursor: reactive[int] = reactive(0)

    class Moved(Message):
        """The cursor landed on another row."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, rows: EventRows, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = rows
        self.lines_rendered = 0
        self.virtual_size = Size(_WIDTH, len(rows))

    def reset(self) -> None:
        """The rows changed (filter or reload): resize, move the cursor home, repaint."""
        self.virtual_size = Size(_WIDTH, len(self.rows))
        self.cursor = 0
        self.scroll_to(0, 0, animate=False)
        self.refresh()
        self.post_message(self.Moved(0))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        self.lines_rendered += 1
        seq, step, kind, fields = self.rows.parts(index)
        segments = [Segment(seq + " ", _SEQ), Segment(step + " ", _STEP),
                    Segment(kind + " ", _type_style(kind.strip())), Segment(fields, _FIELDS)]
        strip = Strip(segments)
        if index == self.cursor:
            strip = strip.apply_style(_CURSOR)
        base = _CURSOR if index == self.cursor else self.rich_style
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def watch_cursor(self, old: int, new: int) -> None:
        top = self.scroll_offset.y
        height = self.scrollable_content_region.height
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif height and new >= top + height:
            self.scroll_to(y=new - height + 1, animate=False)
        self.refresh()

    def _go(self, index: int) -> None:
        last = len(self.rows) - 1
        if last < 0:
            return
        self.cursor = max(0, min(last, index))
        self.post_message(self.Moved(self.cursor))

    def action_move(self, delta: int) -> None:
        self._go(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._go(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_edge(self, end: int) -> None:
        self._go(len(self.rows) - 1 if end else 0)
