"""The decisions list: one line per event, formatted only when painted, fetched by the page."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style

from lens.tui._lines import VirtualList
from lens.tui._rows import EventRows

__all__ = ["EventLines"]

_SEQ = Style(dim=True)
_STEP = Style(color="cyan")
_FIELDS = Style()
_TYPE_COLOURS = {
    "run": "bright_white", "iteration": "white", "context": "green", "skill": "magenta",
    "llm": "yellow", "tool": "bright_blue", "route": "cyan", "injection": "green",
}


_TYPE_STYLES = {family: Style(color=colour, bold=True) for family, colour in _TYPE_COLOURS.items()}
_OTHER_TYPE = Style(color="white", bold=True)


def _type_style(kind: str) -> Style:
    """The style of an event type's family (built once: a line is painted per keystroke)."""
    return _TYPE_STYLES.get(kind.split(".", 1)[0], _OTHER_TYPE)


class EventLines(VirtualList):
    """Rows of an :class:`EventRows`; rows not fetched yet paint as ``…`` and are asked for."""

    DEFAULT_CSS = "EventLines { height: 1fr; }"

    def __init__(self, rows: EventRows | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = rows if rows is not None else EventRows(())
        self.count = len(self.rows)

    def reset(self) -> None:
        """The rows changed (loaded, filtered, reloaded): resize, cursor home, repaint."""
        self.set_count(len(self.rows))

    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        parts = self.rows.parts(index)
        if parts is None:
            return None
        seq, step, kind, fields = parts
        return [Segment(seq + " ", _SEQ), Segment(step + " ", _STEP),
                Segment(kind + " ", _type_style(kind.strip())), Segment(fields, _FIELDS)]
