"""The trends screen: latency, tokens, error rate and decisions per day or hour, as plots.

Reached with ``T`` from the runs screen. The numbers are ``footprint stats``'s
(``recorder.store._trends``: one aggregate over the runs' outlines), read on a
worker; each chart is a ``textual-plotext`` widget with one line per group.
``b`` switches day/hour buckets, ``g`` cycles the grouping (none, model,
skill, release), ``escape`` goes back to the runs.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.widgets import Static
from textual_plotext import PlotextPlot

from lens.playback._trends import draw
from lens.tui._base import LensFooter, LensHeader, Loader
from lens.tui._state import LensState

__all__ = ["CHARTS", "TrendsScreen"]

CHARTS = ("p50_ms", "tokens_per_run", "error_rate", "decisions_per_run")
"""The charts, in reading order (``recorder.store._trends.METRICS`` names them)."""
_GROUPS: tuple[str | None, ...] = (None, "model", "skill", "release")


class TrendsScreen(Loader):
    """Four charts over the store's runs, per time bucket; a note line says what is shown."""

    DEFAULT_CSS = """
    TrendsScreen Grid { grid-size: 2 2; height: 1fr; }
    TrendsScreen #note { color: $text-muted; height: 1; }
    """
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "back", "Back"),
        Binding("b", "bucket", "Day/hour"),
        Binding("g", "group", "Group"),
    ]

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow
        self.by: str = "day"
        self.group_by: str | None = None
        self.shown: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, "trends", follow=self.follow)
        yield Static(self._note("reading the runs…"), id="note")
        with Grid():
            for chart in CHARTS:
                yield PlotextPlot(id=chart)
        yield LensFooter()

    def _note(self, tail: str) -> str:
        group = f" by {self.group_by}" if self.group_by else ""
        return f" per {self.by}{group} · {tail} · b: day/hour · g: group"

    def on_screen_resume(self) -> None:
        self.call_after_refresh(self.reload)

    def reload(self) -> None:
        """Read the trends on a worker, then draw them."""
        by, group_by = self.by, self.group_by
        self.load("trends", lambda: self._read(by, group_by), self._fill)

    def _read(self, by: str, group_by: str | None) -> dict[str, Any]:
        from recorder.store._trends import TrendQuery, trend_series, trends

        with self.state.gate.held() as store:
            table = trends(store, TrendQuery(by=by, group_by=group_by))
        labels, series = trend_series(table, by)
        runs = sum(table.column("runs").to_pylist())
        return {"labels": labels, "series": series, "runs": runs}

    def _fill(self, found: dict[str, Any]) -> None:
        from recorder.store._trends import METRICS

        self.shown = found
        titles = dict(METRICS)
        buckets = len(found["labels"])
        self.query_one("#note", Static).update(
            self._note(f"{found['runs']} runs in {buckets} {self.by}{'s' * (buckets != 1)}"))
        for chart in CHARTS:
            widget = self.query_one(f"#{chart}", PlotextPlot)
            plt = widget.plt
            plt.clear_data()
            plt.title(titles[chart])
            draw(plt, found["labels"], found["series"].get(chart, {}))
            widget.refresh()

    def action_bucket(self) -> None:
        self.by = "hour" if self.by == "day" else "day"
        self.reload()

    def action_group(self) -> None:
        self.group_by = _GROUPS[(_GROUPS.index(self.group_by) + 1) % len(_GROUPS)]
        self.reload()

    async def action_back(self) -> None:
        await self.app.run_action("runs")
