"""The runs screen: one line per recorded run; ``enter`` opens its timeline.

Line-virtualized like the event lists: the runs are read on a worker when the
screen is shown, and only the lines on screen are formatted, so a store of
ten thousand runs paints as fast as one.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from lens.tui._base import LensFooter, LensHeader, Loader
from lens.tui._lines import VirtualList
from lens.tui._state import RUN_COLUMNS, LensState
from lens.tui._summary import clip

__all__ = ["RunLines", "RunsScreen"]

_WIDTHS = {"started": 19, "run id": 14, "status": 10, "iters": 5, "tokens": 8, "model": 14,
           "events": 9, "answer": 31}
_STATUS = {"complete": Style(color="green"), "failed": Style(color="red", bold=True)}


def _cell(column: str, value: Any) -> str:
    """A cell; the run id shows as its 13-character prefix (``footprint lens`` takes it)."""
    if value is None:
        return "—"
    if column == "run id":
        return clip(value, 14)
    return clip(value, _WIDTHS[column])


def cells(row: tuple[Any, ...]) -> list[str]:
    """One run's row as the list shows it, in ``RUN_COLUMNS`` order."""
    return [_cell(c, v) for c, v in zip(RUN_COLUMNS, row, strict=True)]


def _pad(column: str, text: str) -> str:
    width = _WIDTHS[column]
    return text.rjust(width) if column in ("iters", "tokens", "events") else text.ljust(width)


def header_line() -> str:
    return " ".join(_pad(c, c) for c in RUN_COLUMNS)


class RunLines(VirtualList):
    """One line per run; ``enter`` asks to open the run under the cursor."""

    DEFAULT_CSS = "RunLines { height: 1fr; }"
    BINDINGS = [Binding("enter", "open", "Open", show=False)]  # noqa: RUF012
    width = 0

    class Open(Message):
        """The person asked to open a run."""

        def __init__(self, run_id: str) -> None:
            super().__init__()
            self.run_id = run_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[Any, ...]] = []

    def use(self, rows: list[tuple[Any, ...]]) -> None:
        """New rows; the cursor stays on the same run when it is still listed."""
        keep = self.run_id(self.cursor) if self.rows else None
        self.rows = rows
        ids = [str(r[1]) for r in rows]
        self.set_count(len(rows), home=keep not in ids)
        if keep in ids:
            self.go(ids.index(keep))

    def run_id(self, index: int) -> str | None:
        return str(self.rows[index][1]) if 0 <= index < len(self.rows) else None

    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        out: list[Segment] = []
        for column, text in zip(RUN_COLUMNS, cells(self.rows[index]), strict=True):
            out.append(Segment(_pad(column, text) + " ", _STATUS.get(text, Style())
                               if column == "status" else Style()))
        return out

    def action_open(self) -> None:
        run_id = self.run_id(self.cursor)
        if run_id is not None:
            self.post_message(self.Open(run_id))


class RunsScreen(Loader):
    """The store's runs, oldest first."""

    DEFAULT_CSS = """
    RunsScreen #columns { height: 1; text-style: bold; background: $panel; }
    RunsScreen RunLines { height: 1fr; }
    RunsScreen #hint { color: $text-muted; }
    """
    BINDINGS = [Binding("T", "app.trends", "Trends")]  # noqa: RUF012
    Open = RunLines.Open

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow
        self._shown: list[tuple[Any, ...]] | None = None

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "runs", follow=self.follow)
        yield Static(header_line(), id="columns")
        yield RunLines(id="runs")
        yield Static(" enter: open the run's timeline", id="hint")
        yield LensFooter()

    def on_screen_resume(self) -> None:
        self.call_after_refresh(self.reload)

    def reload(self) -> None:
        """Re-read the runs on a worker (when shown, and each ``--follow`` tick), keeping the
        cursor on the same run; while a run's screen covers this one, nothing is read."""
        if not self.is_current:
            return
        lines = self.query_one(RunLines)
        if self._shown is None:
            lines.loading = True
        self.load("runs", self.state.runs, self._fill)

    def _fill(self, rows: list[tuple[Any, ...]]) -> None:
        lines = self.query_one(RunLines)
        lines.loading = False
        if self.focused is None:
            lines.focus()
        if rows == self._shown:
            return
        self._shown = rows
        lines.use(rows)
        self.query_one(LensHeader).redraw()
