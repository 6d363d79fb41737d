"""A line-virtualized table of text rows: the sessions, experiments and comparison lists.

Rows are lists of cells already formatted (``Cell``: text and an optional Rich
style); only the lines on screen are padded and painted (:class:`VirtualList`),
so a list of ten thousand sessions paints as fast as one. The last column takes
the width left. ``enter`` posts :class:`TableLines.Chosen` with the row's index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message

from footprint._errors import ConfigError
from lens.tui._lines import VirtualList
from lens.tui._summary import clip

__all__ = ["Cell", "Column", "TableLines", "columns_line"]

Cell = tuple[str, Style | None]
"""A cell's text and its style (``None``: the list's own)."""


@dataclass(frozen=True, slots=True)
class Column:
    """A column's title, width (the last column's is its least) and alignment."""

    title: str
    width: int
    right: bool = False

    def __post_init__(self) -> None:
        if type(self.width) is not int or self.width < 1:
            raise ConfigError(f"Column({self.title!r}, {self.width!r}): a width >= 1, "
                              "e.g. Column('run id', 14)")

    def pad(self, text: str, width: int | None = None) -> str:
        width = width or self.width
        text = clip(text, width)
        return text.rjust(width) if self.right else text.ljust(width)


def columns_line(columns: Sequence[Column]) -> str:
    """The titles, padded as the rows are."""
    return " ".join(c.pad(c.title) for c in columns)


class TableLines(VirtualList):
    """One line per row; ``enter`` posts :class:`Chosen` for the row under the cursor."""

    DEFAULT_CSS = "TableLines { height: 1fr; }"
    BINDINGS = [Binding("enter", "choose", "Open", show=False)]  # noqa: RUF012
    width = 0

    class Chosen(Message):
        """``enter`` on row ``index``."""

        def __init__(self, lines: TableLines, index: int) -> None:
            super().__init__()
            self.lines, self.index = lines, index

        @property
        def control(self) -> TableLines:
            return self.lines

    def __init__(self, columns: Sequence[Column], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = tuple(columns)
        self.rows: list[list[Cell]] = []

    def use(self, rows: list[list[Cell]], *, keep: bool = False) -> None:
        """New rows; ``keep``: the cursor stays on its index (clamped)."""
        self.rows = rows
        self.set_count(len(rows), home=not keep)

    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        row = self.rows[index]
        fixed = sum(c.width + 1 for c in self.columns[:-1])
        last = max(self.columns[-1].width, self.scrollable_content_region.width - fixed)
        out: list[Segment] = []
        for i, (column, (text, style)) in enumerate(zip(self.columns, row, strict=True)):
            wide = last if i == len(self.columns) - 1 else None
            out.append(Segment(column.pad(" ".join(text.split()), wide) + " ", style))
        return out

    def action_choose(self) -> None:
        if 0 <= self.cursor < len(self.rows):
            self.post_message(self.Chosen(self, self.cursor))
