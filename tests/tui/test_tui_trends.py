"""The lens's trends screen (``T`` on the runs screen) over a store whose numbers are known
(``tests/trends_store.py``): a Pilot drive and an SVG snapshot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static
from textual_plotext import PlotextPlot
from trends_store import write_trends_store
from tui_support import SIZE, lens_on, settle, text_of

from lens.tui import LensApp
from lens.tui._runs import RunsScreen
from lens.tui._trends import CHARTS, TrendsScreen

Snap = Callable[..., bool]


@pytest.fixture(scope="module")
def trends_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_trends_store(tmp_path_factory.mktemp("trends") / "store")


async def test_given_the_runs_screen_when_t_is_pressed_then_trends_of_the_store_are_plotted(
    trends_store: Path,
) -> None:
    async with lens_on(trends_store, None) as pilot:
        assert isinstance(pilot.app.screen, RunsScreen)
        await pilot.press("T")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, TrendsScreen) and screen.shown is not None
        assert screen.shown["labels"] == ["2026-01-01", "2026-01-02"]
        assert screen.shown["series"]["p50_ms"] == {"all": [200.0, 1000.0]}
        assert screen.shown["series"]["error_rate"] == {"all": [pytest.approx(1 / 3), 0.0]}
        assert "4 runs in 2 days" in text_of(screen.query_one("#note", Static))
        for chart in CHARTS:
            assert screen.query_one(f"#{chart}", PlotextPlot).size.area > 0
        plotted = screen.query_one("#p50_ms", PlotextPlot).render()
        assert "latency p50 (ms)" in str(plotted)


async def test_given_the_trends_screen_when_g_and_b_are_pressed_then_groups_and_hours_show(
    trends_store: Path,
) -> None:
    async with lens_on(trends_store, None) as pilot:
        await pilot.press("T")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, TrendsScreen)
        await pilot.press("g")  # by model
        await settle(pilot)
        assert screen.shown is not None
        assert screen.shown["series"]["tokens_per_run"] == {"a": [15 / 2, 7.0], "b": [30.0, None]}
        await pilot.press("b")  # hourly
        await settle(pilot)
        assert len(screen.shown["labels"]) == 3  # 00:00, 05:00 and the next day's 12:00
        assert "per hour by model" in text_of(screen.query_one("#note", Static))
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, RunsScreen)


def test_given_the_known_store_when_the_trends_screen_shows_then_it_matches(
    snap_compare: Snap, trends_store: Path,
) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)

    assert snap_compare(LensApp(trends_store), run_before=run_before, terminal_size=SIZE)
