"""The lens on a run mapped from another framework's trace: the header says so, and what the
model saw is the request the trace carried."""

from __future__ import annotations

from pathlib import Path

from otlp_build import agent_trace, trace_request
from textual.widgets import OptionList, Static
from tui_support import lens_on, settle, text_of

from lens.tui._sql import SqlScreen
from lens.tui._timeline import TimelineScreen
from recorder.ingest import ingest_files


def _store(tmp_path: Path) -> Path:
    pb = tmp_path / "trace.pb"
    pb.write_bytes(trace_request(agent_trace(31, calls=2)).SerializeToString())
    report = ingest_files([pb], tmp_path / "store")
    assert len(report.runs) == 1
    return tmp_path / "store"


async def test_given_an_ingested_run_when_the_lens_opens_then_it_says_where_the_run_came_from(
        tmp_path: Path) -> None:
    async with lens_on(_store(tmp_path)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, TimelineScreen)
        header = text_of(screen.query_one("LensHeader", Static))
        assert "mapped from a trace of test-scope (otel-genai, fidelity request-level)" in header
        assert screen.query_one("#blocks-system-prompt", OptionList).option_count == 1
        await pilot.press("right", "2")
        await settle(pilot)
        assert screen.query_one("#blocks-messages", OptionList).option_count == 3
        await pilot.press("colon")
        await settle(pilot)
        assert isinstance(pilot.app.screen, SqlScreen)
