"""The runs screen: one row per recorded run; ``enter`` opens its timeline."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import DataTable, Footer, Static

from lens.tui._base import LensHeader, Loader
from lens.tui._state import RUN_COLUMNS, LensState
from lens.tui._summary import clip

__all__ = ["RunsScreen"]


def _cell(column: str, value: Any) -> str:
    """A table cell; the run id shows as its 13-character prefix (``footprint lens`` takes it)."""
    if value is None:
        return "—"
    if column == "run id":
        return clip(value, 14)
    return clip(value, 30) if column == "answer" else str(value)


class RunsScreen(Loader):
    """A small table (``DataTable`` is fine here: one row per run)."""

    DEFAULT_CSS = "RunsScreen DataTable { height: 1fr; } RunsScreen #hint { color: $text-muted; }"

    class Open(Message):
        """The person asked to open a run."""

        def __init__(self, run_id: str) -> None:
            super().__init__()
            self.run_id = run_id

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow
        self._shown: list[tuple[Any, ...]] | None = None

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "runs", follow=self.follow)
        table: DataTable[str] = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(" enter: open the run's timeline", id="hint")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*RUN_COLUMNS)
        table.focus()

    def on_screen_resume(self) -> None:
        self.call_after_refresh(self.reload)

    def reload(self) -> None:
        """Re-read the runs on a worker (when shown, and each ``--follow`` tick), keeping the
        cursor on the same run; while a run's screen covers this one, nothing is read."""
        if self.is_current:
            self.load("runs", self.state.runs, self._fill)

    def _fill(self, rows: list[tuple[Any, ...]]) -> None:
        if rows == self._shown:
            return
        self._shown = rows
        table: DataTable[str] = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear()
        for row in rows:
            table.add_row(*(_cell(c, v) for c, v in zip(RUN_COLUMNS, row, strict=True)),
                          key=str(row[1]))
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))
        self.query_one(LensHeader).redraw()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(self.Open(event.row_key.value))
