"""The SQL console: a query over the store's views; errors shown inline, never raised.

The query runs on a worker (the screen stays live while it does), and its
rows show in a line-virtualized list: up to ``MAX_ROWS`` of them, each line
formatted only when it is painted.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static

from lens.tui._base import LensFooter, LensHeader, Loader
from lens.tui._lines import VirtualList
from lens.tui._state import LensState
from lens.tui._summary import clip
from recorder import SqlRefused, SqlTimeout
from recorder.store._sandbox import VIEW_NAMES

__all__ = ["MAX_ROWS", "TIME_LIMIT_S", "SqlLines", "SqlResult", "SqlScreen", "run_query"]

MAX_ROWS = 20_000
TIME_LIMIT_S = 60.0
"""A console query still running after this many seconds is stopped (as ``footprint sql``)."""
_SAMPLE = 200
_CELL = 60


class SqlResult:
    """Columns and at most ``MAX_ROWS`` rows, or the error's first line."""

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]], error: str | None,
                 more: bool = False) -> None:
        self.columns, self.rows, self.error, self.more = columns, rows, error, more


def run_query(state: LensState, query: str, *, timeout: float = TIME_LIMIT_S) -> SqlResult:
    """Run ``query`` through ``store.sql``, stopped after ``timeout`` seconds; any failure
    becomes ``SqlResult.error``.

    It holds the store's gate while it runs, as every read of the lens does: a ``--follow``
    refresh rebuilt the catalog under it (the console's connection closed mid-query, and
    the damage probe that followed ran on the busy connection, naming a whole file damaged).
    ``escape`` and quitting still stop it at once (``store.interrupt``)."""
    if not query.strip():
        return SqlResult([], [], "type a query, e.g. SELECT type, count(*) FROM events GROUP BY 1")
    try:
        with state.gate.held() as store:
            relation = store.sql(query, limit=MAX_ROWS + 1, timeout=timeout)
            columns = list(relation.columns)
            rows = relation.fetchall()
    except SqlRefused as exc:  # the sandbox's one-line refusal already names the views
        return SqlResult([], [], str(exc))
    except SqlTimeout as exc:
        return SqlResult([], [], str(SqlTimeout(exc.limit, "narrow the "
                                                          "query, or run it with `footprint sql "
                                                          "--timeout SECONDS`")))
    except Exception as exc:  # a UI boundary: every failure is shown, none escapes
        lines = str(exc).strip().splitlines()
        first = lines[0] if lines else type(exc).__name__
        return SqlResult([], [], f"{first} — the views are {VIEW_NAMES}")
    return SqlResult(columns, rows[:MAX_ROWS], None, more=len(rows) > MAX_ROWS)


class SqlLines(VirtualList):
    """The result rows, one line each, cells padded to the widths of the first rows."""

    DEFAULT_CSS = "SqlLines { height: 1fr; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.result = SqlResult([], [], None)
        self.widths: list[int] = []

    def show(self, result: SqlResult) -> None:
        self.result = result
        sample = [result.columns, *(_cells(r) for r in result.rows[:_SAMPLE])]
        self.widths = [max((len(row[i]) for row in sample), default=0)
                       for i in range(len(result.columns))]
        self.width = max(1, sum(w + 2 for w in self.widths))
        self.set_count(len(result.rows))

    def header(self) -> str:
        return _line(self.result.columns, self.widths)

    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        return [Segment(_line(_cells(self.result.rows[index]), self.widths))]


def _cells(row: tuple[Any, ...] | list[str]) -> list[str]:
    return [clip(v, _CELL) if v is not None else "NULL" for v in row]


def _line(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False))


class SqlScreen(Loader):
    """``enter`` runs the query on a worker (keys act meanwhile); ``escape`` goes back and
    ``q``/Ctrl-C quit, each stopping a query still running."""

    DEFAULT_CSS = """
    SqlScreen #status { height: auto; padding: 0 1; }
    SqlScreen #columns { height: 1; text-style: bold; background: $panel; }
    SqlScreen SqlLines { height: 1fr; }
    """
    AUTO_FOCUS = "Input"
    BINDINGS = [Binding("escape", "back", "Back")]  # noqa: RUF012

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "sql", follow=self.follow)
        yield Input(placeholder="SQL over the store's views, e.g. SELECT * FROM runs — "
                                "enter runs it", id="query")
        yield Static(Text(f"views: {VIEW_NAMES}", style="dim"), id="status")
        yield Static(id="columns")
        yield SqlLines(id="result")
        yield LensFooter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        lines = self.query_one(SqlLines)
        lines.loading = True
        self.query_one("#status", Static).update(Text("running…", style="dim italic"))
        state, query = self.state, event.value
        self.load("query", lambda: run_query(state, query), self._shown)

    def _shown(self, result: SqlResult) -> None:
        lines = self.query_one(SqlLines)
        lines.loading = False
        status = self.query_one("#status", Static)
        if result.error is not None:
            lines.show(SqlResult([], [], None))
            self.query_one("#columns", Static).update("")
            status.update(Text(f"error: {result.error}", style="bold red"))
            return
        lines.show(result)
        self.query_one("#columns", Static).update(lines.header())
        more = f" (first {MAX_ROWS:,} shown)" if result.more else ""
        status.update(Text(f"{len(result.rows):,} rows{more}", style="green"))

    def action_back(self) -> None:
        """Back to the last screen; a query still running is stopped (DuckDB interrupt)."""
        self.state.store.interrupt()
        self.app.pop_screen()
