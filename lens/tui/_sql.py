"""The SQL console: a query over the store's views; errors shown inline, never raised."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from lens.tui._base import LensHeader
from lens.tui._state import LensState
from lens.tui._summary import clip
from recorder import SqlRefused

__all__ = ["MAX_ROWS", "SqlResult", "SqlScreen", "run_query"]

MAX_ROWS = 500
VIEWS = ("events, runs, decisions, injections, llm_calls, tool_calls, rejections, "
         "escalations, route_conflicts, blobs")


class SqlResult:
    """Columns and at most ``MAX_ROWS`` rows, or the error's first line."""

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]], error: str | None,
                 more: bool = False) -> None:
        self.columns, self.rows, self.error, self.more = columns, rows, error, more


def run_query(state: LensState, query: str) -> SqlResult:
    """Run ``query`` through ``store.sql``; any failure becomes ``SqlResult.error``."""
    if not query.strip():
        return SqlResult([], [], "type a query, e.g. SELECT type, count(*) FROM events GROUP BY 1")
    try:
        relation = state.store.sql(query)
        if relation is None:
            return SqlResult([], [], None)
        columns = list(relation.columns)
        rows = relation.limit(MAX_ROWS + 1).fetchall()
    except SqlRefused as exc:  # the sandbox's one-line refusal already names the views
        return SqlResult([], [], str(exc))
    except Exception as exc:  # a UI boundary: every failure is shown, none escapes
        lines = str(exc).strip().splitlines()
        first = lines[0] if lines else type(exc).__name__
        return SqlResult([], [], f"{first} — the views are {VIEWS}")
    return SqlResult(columns, rows[:MAX_ROWS], None, more=len(rows) > MAX_ROWS)


class SqlScreen(Screen[None]):
    """``enter`` runs the query; ``escape`` goes back."""

    DEFAULT_CSS = """
    SqlScreen #status { height: auto; padding: 0 1; }
    SqlScreen DataTable { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "back", "Back")]  # noqa: RUF012

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "sql", follow=self.follow)
        yield Input(placeholder="SQL over the store's views, e.g. SELECT * FROM runs — "
                                "enter runs it", id="query")
        yield Static(Text(f"views: {VIEWS}", style="dim"), id="status")
        yield DataTable(id="result", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        result = run_query(self.state, event.value)
        status = self.query_one("#status", Static)
        table: DataTable[str] = self.query_one(DataTable)
        table.clear(columns=True)
        if result.error is not None:
            status.update(Text(f"error: {result.error}", style="bold red"))
            return
        table.add_columns(*result.columns)
        for row in result.rows:
            table.add_row(*(clip(v, 60) if v is not None else "NULL" for v in row))
        more = f" (first {MAX_ROWS} shown)" if result.more else ""
        status.update(Text(f"{len(result.rows)} rows{more}", style="green"))

    def action_back(self) -> None:
        self.app.pop_screen()
