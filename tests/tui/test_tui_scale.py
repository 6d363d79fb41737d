"""The decisions view over a 100k-event run: line-virtualized, so only visible lines render."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.scroll_view import ScrollView
from textual.widgets import Static
from tui_support import settle, write_big_run

from lens.tui import LensApp
from lens.tui._decisions import DecisionsScreen
from lens.tui._eventlist import EventLines

COUNT = 100_000


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("big") / "store"
    return path, write_big_run(path, COUNT)


async def test_given_100k_events_when_decisions_open_then_first_lines_paint_via_render_line(
    big_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []
    original = EventLines.render_line

    def spy(self: EventLines, y: int) -> object:
        asked.append(y)
        return original(self, y)

    monkeypatch.setattr(EventLines, "render_line", spy)
    path, run_id = big_store
    app = LensApp(path, run=run_id, view="decisions")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DecisionsScreen)
        lines = screen.query_one(EventLines)
        assert isinstance(lines, ScrollView) and lines.rows.total == COUNT
        assert lines.virtual_size.height == COUNT
        first = original(lines, 0).text
        assert first.split()[:3] == ["0", "#0", "run.start"]
        assert "1 #1 engine#1" in " ".join(original(lines, 1).text.split())
        height = lines.size.height
        assert asked and max(asked) < height, "only on-screen lines are rendered"
        assert len(asked) < 20 * height, "rendering did not touch the 100k rows"
        assert len(lines.rows._cache) < 1_000, "only the rows near the screen were fetched"
        await pilot.press("end")
        await settle(pilot)
        bottom = lines.scrollable_content_region.height - 1
        assert lines.cursor == COUNT - 1 and "run.end" in original(lines, bottom).text
        count = screen.query_one("#count", Static)
        assert f"{COUNT:,} of {COUNT:,} events" in str(count.content)
        await pilot.press("slash", *"skill.", "enter")
        await settle(pilot)
        assert len(lines.rows) == sum(1 for s in range(1, COUNT - 1) if s % 5 == 4)
        assert "skill.rejected" in original(lines, 0).text
