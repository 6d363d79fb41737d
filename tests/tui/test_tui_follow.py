"""``--follow``: a run still being written shows up, and grows, through the live segments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable
from tui_support import settle

from footprint.events import Event
from lens.tui import LensApp
from lens.tui._timeline import IterationStrip, TimelineScreen
from recorder import ParquetSink, Recorder


async def _until(pilot: Pilot[int], check: Callable[[], bool], seconds: float = 6.0) -> bool:
    for _ in range(int(seconds / 0.1)):
        if check():
            return True
        await pilot.pause(0.1)
    return False


async def test_given_a_run_being_written_when_following_then_the_timeline_and_runs_catch_up(
    tmp_path: Path, desk_events: list[Event],
) -> None:
    run_id = desk_events[0].run_id
    cut = next(e.seq for e in desk_events if e.iteration == 3)
    recorder = Recorder(sinks=[ParquetSink(tmp_path)])
    try:
        for event in desk_events[:cut]:
            recorder.emit(event)
        assert recorder.flush()
        app = LensApp(tmp_path, run=run_id, follow=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, TimelineScreen)
            assert app.state.head is not None and app.state.head.status == "incomplete"
            assert len(screen.outline) == 2
            await pilot.press("G")
            for event in desk_events[cut:]:
                recorder.emit(event)
            assert recorder.flush()
            grown = await _until(pilot, lambda: len(screen.outline) == 6)
            assert grown, "the timeline did not pick up the rest of the run"
            assert app.state.head.status == "complete"
            await settle(pilot)
            assert screen.query_one(IterationStrip).count == 6
            assert screen.index == 5, "following the last iteration stays live"
            await pilot.press("escape")
            await settle(pilot)
            table = app.screen.query_one(DataTable)
            assert table.get_row_at(0)[2] == "complete"
    finally:
        recorder.close()
