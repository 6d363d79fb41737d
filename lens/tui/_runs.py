"""The runs screen: one line per recorded run; ``enter`` opens its timeline.

Each line shows the run's cost in USD as ``footprint runs`` prints it
(``unpriced`` when a call's model has no price, never a made-up 0), priced off
the UI thread a block of :data:`COST_BLOCK` runs at a time as they come on
screen (``…`` until then); a failed run's last cell is its error, in red
(``✗ STEP TYPE: message``), where a complete run shows its answer.

``c`` switches the columns between the outcome (iterations, tokens, cost,
model, events) and the labels: the run's user, session, release, tags and
scores (each score's latest record: its label, else its value).

``/`` opens the filter line: ``key=value`` terms as ``footprint runs`` takes
them (``release=1.4 tag=beta user=u-7 status=failed since=2h score=helpful<1``);
``enter`` applies it (a bad term is shown, quoted, with its fix), an empty
line shows every run again.

Line-virtualized like the event lists: the runs are read on a worker when the
screen is shown, and only the lines on screen are formatted, so a store of
ten thousand runs paints as fast as one.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input, Static

from footprint._errors import ConfigError
from lens.tui._base import LensFooter, LensHeader, Loader
from lens.tui._lines import VirtualList
from lens.tui._state import RUN_FIELDS, LensState
from lens.tui._summary import clip
from recorder.store._prices import usd

__all__ = ["COLUMNS", "COST_BLOCK", "LABEL_COLUMNS", "Cost", "RunLines", "RunsScreen", "cells",
           "header_line", "outcome_text", "scores_text"]

Cost = tuple[float | None, int]
"""A run's ``(cost_usd, unpriced_calls)`` (``recorder.run_costs``)."""
COST_BLOCK = 100
"""The runs are priced this many at a time (the block of the list a missing cost is in)."""
COLUMNS = ("started", "run id", "status", "iters", "tokens", "cost", "model", "events",
           "answer / error")
LABEL_COLUMNS = ("started", "run id", "status", "user", "session", "release", "tags", "scores",
                 "answer / error")
"""The columns ``c`` switches to: the run's labels and scores."""
_WIDTHS = {"started": 19, "run id": 14, "status": 10, "iters": 5, "tokens": 8, "cost": 11,
           "model": 14, "events": 7, "answer / error": 31, "user": 10, "session": 12,
           "release": 8, "tags": 14, "scores": 16}
_RIGHT = ("iters", "tokens", "cost", "events")
_FIELD = {name: i for i, name in enumerate(RUN_FIELDS)}
_STATUS = {"complete": Style(color="green"), "failed": Style(color="red", bold=True)}
_ERROR = Style(color="red")
_PENDING = Style(dim=True, italic=True)
_DIM = Style(dim=True)


def _field(row: tuple[Any, ...], name: str) -> Any:
    return row[_FIELD[name]]


def outcome_text(row: tuple[Any, ...]) -> str | None:
    """The last cell: the answer, or a failed run's error (``✗ STEP TYPE: message``)."""
    if _field(row, "error_type") is None:
        return _field(row, "answer")  # type: ignore[no-any-return]
    return (f"✗ {_field(row, 'failed_step') or '?'} {_field(row, 'error_type')}: "
            f"{' '.join(str(_field(row, 'error_message') or '').split())}")


def _number(text: str) -> str:
    try:
        return f"{float(text):g}"
    except ValueError:
        return text


def scores_text(scores: list[list[str]] | None) -> str | None:
    """``helpful=0 judge=pass``: each score's latest label or value (``None``: no score)."""
    if not scores:
        return None
    return " ".join(f"{name}={_number(str(shown))}" for name, shown in scores)


def _values(row: tuple[Any, ...], cost: Cost | None) -> dict[str, Any]:
    tags = _field(row, "tags")
    return {"started": _field(row, "started"), "run id": _field(row, "run_id"),
            "status": _field(row, "status"), "iters": _field(row, "iterations"),
            "tokens": _field(row, "tokens"), "model": _field(row, "model"),
            "events": _field(row, "events"), "answer / error": outcome_text(row),
            "cost": "…" if cost is None else usd(*cost), "user": _field(row, "user_id"),
            "session": _field(row, "session_id"), "release": _field(row, "release"),
            "tags": ",".join(tags) if tags else None,
            "scores": scores_text(_field(row, "scores"))}


def cells(row: tuple[Any, ...], cost: Cost | None = None, *, last: int = 31,
          columns: tuple[str, ...] = COLUMNS) -> list[str]:
    """One run's row as the list shows it, in ``columns`` order; ``cost`` ``None``: not
    priced yet (``…``); the last cell clipped to ``last`` characters. The run id shows as
    its 13-character prefix (``footprint lens`` takes it)."""
    values = _values(row, cost)
    return [("—" if values[c] is None else clip(values[c], last if c == columns[-1]
                                                 else _WIDTHS[c])) for c in columns]


def _pad(column: str, text: str, width: int | None = None) -> str:
    width = width or _WIDTHS[column]
    return text.rjust(width) if column in _RIGHT else text.ljust(width)


def header_line(columns: tuple[str, ...] = COLUMNS) -> str:
    return " ".join(_pad(c, c) for c in columns)


class RunLines(VirtualList):
    """One line per run; ``enter`` asks to open the run under the cursor. A run whose cost
    is not known yet shows ``…`` there, and the list asks ``on_missing`` for its lines."""

    DEFAULT_CSS = "RunLines { height: 1fr; }"
    BINDINGS = [Binding("enter", "open", "Open", show=False)]  # noqa: RUF012
    width = 0
    columns: tuple[str, ...] = COLUMNS
    """The columns shown (:data:`COLUMNS` or :data:`LABEL_COLUMNS`)."""

    class Open(Message):
        """The person asked to open a run."""

        def __init__(self, run_id: str) -> None:
            super().__init__()
            self.run_id = run_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[Any, ...]] = []
        self.costs: dict[str, Cost] = {}
        """The runs priced so far, by run id."""

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
        row = self.rows[index]
        cost = self.costs.get(str(row[1]))
        if cost is None:
            self._want(index)
        columns = self.columns
        fixed = sum(_WIDTHS[c] + 1 for c in columns[:-1])
        last = max(8, self.scrollable_content_region.width - fixed)
        out: list[Segment] = []
        for column, text in zip(columns, cells(row, cost, last=last, columns=columns),
                                strict=True):
            style = Style()
            if column == "status":
                style = _STATUS.get(text, style)
            elif column == "cost" and (cost is None or text == "unpriced"):
                style = _PENDING if cost is None else _DIM
            elif column == COLUMNS[-1] and _field(row, "error_type") is not None:
                style = _ERROR
            out.append(Segment(_pad(column, text, last if column == columns[-1] else None)
                               + " ", style))
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
    RunsScreen #where { display: none; }
    RunsScreen #where.shown { display: block; }
    """
    BINDINGS = [Binding("T", "app.trends", "Trends"),  # noqa: RUF012
                Binding("S", "app.sessions", "Sessions"),
                Binding("E", "app.experiments", "Experiments"),
                Binding("c", "columns", "Labels", show=False),
                Binding("slash", "filter", "Filter", key_display="/", show=False)]
    Open = RunLines.Open
    HINT = (" enter: open the run's timeline · c: user, session, release, tags, scores · "
            "/: filter")

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow
        self._shown: list[tuple[Any, ...]] | None = None
        self._pricing: set[str] = set()
        """The runs a cost worker is pricing now."""

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "runs", follow=self.follow)
        yield Static(header_line(), id="columns")
        yield RunLines(id="runs")
        yield Input(placeholder="filter: release=1.4 tag=beta user=… status=failed since=2h "
                                "score=helpful<1 (enter applies; empty: all runs)", id="where")
        yield Static(self.HINT, id="hint")
        yield LensFooter()

    def on_mount(self) -> None:
        self.query_one(RunLines).on_missing = self._price

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
        before = {_field(r, "run_id"): r for r in self._shown or ()}
        self._shown = rows
        self._pricing.clear()
        for row in rows:  # a run that changed (grew, ended) may cost more now: priced again
            run_id = _field(row, "run_id")
            if run_id in before and before[run_id] != row:
                lines.costs.pop(str(run_id), None)
        lines.use(rows)
        self.query_one(LensHeader).redraw()

    def _price(self, first: int, last: int) -> None:
        """Price the blocks of ``COST_BLOCK`` runs that lines ``first..last`` are in, each on
        a worker of its own (``recorder.run_costs``, as ``footprint runs`` prices)."""
        lines = self.query_one(RunLines)
        for block in range(first // COST_BLOCK, last // COST_BLOCK + 1):
            ids = [str(_field(r, "run_id"))
                   for r in lines.rows[block * COST_BLOCK:(block + 1) * COST_BLOCK]]
            ids = [i for i in ids if i not in lines.costs and i not in self._pricing]
            if ids:
                self._pricing.update(ids)
                self.load(f"costs-{block}", partial(self.state.costs, ids), self._priced)

    def _priced(self, costs: dict[str, Cost]) -> None:
        lines = self.query_one(RunLines)
        lines.costs.update(costs)
        self._pricing.difference_update(costs)
        lines.refresh()

    def action_columns(self) -> None:
        """``c``: the labels' columns (user, session, release, tags, scores), or back."""
        lines = self.query_one(RunLines)
        lines.columns = LABEL_COLUMNS if lines.columns == COLUMNS else COLUMNS
        self.query_one("#columns", Static).update(header_line(lines.columns))
        lines.refresh()

    def action_filter(self) -> None:
        """``/``: show the filter line and type into it."""
        line = self.query_one("#where", Input)
        line.add_class("shown")
        line.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Apply the filter; a bad one is shown in the hint line, the list unchanged."""
        hint = self.query_one("#hint", Static)
        try:
            self.state.filter_runs(event.value)
        except ConfigError as exc:
            hint.update(f" {exc}")
            return
        text = self.state.where
        hint.update(f" filter: {text} — / changes it" if text else self.HINT)
        if not text:
            event.input.remove_class("shown")
        self.query_one(RunLines).focus()
        self.reload()
