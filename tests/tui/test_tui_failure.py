"""A failed run in the lens: the timeline marks the failing iteration and shows the error whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from failed_runs import ERROR_MESSAGE, record_failed
from genai_prices import Usage, calc_price
from tui_support import SIZE, lens_on, settle, text_of

from lens.tui import LensApp
from lens.tui._timeline import IterationStrip
from recorder import open_store

Snap = Callable[..., bool]


@pytest.fixture(scope="module")
def failed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("failed") / "store"
    record_failed(path)
    return path


async def test_given_a_failed_run_when_the_timeline_opens_then_the_error_shows_whole(
    failed_store: Path,
) -> None:
    async with lens_on(failed_store) as pilot:
        screen = pilot.app.screen
        box = screen.query_one("#failure")
        assert box.display
        shown = " ".join(text_of(box).split())
        assert "✗ failed at llm#2 (iteration 2" in shown and "RunError" in shown
        assert " ".join(ERROR_MESSAGE.split()) in shown and shown.endswith("report the bug")
        strip = screen.query_one(IterationStrip)
        assert [h.failed for _, h in sorted(strip.heads.items())] == [False, True]
        assert screen.index == 0
        with open_store(failed_store) as store:
            (tin, tout), = store.rows("SELECT input_tokens, output_tokens FROM llm_calls "
                                      "WHERE end_seq IS NOT NULL")
        first = float(calc_price(Usage(input_tokens=tin, output_tokens=tout), "gpt-4o-mini")
                      .total_price)
        assert f"· ${first:.8f}".rstrip("0") in text_of(screen.query_one("#seen-title"))
        await pilot.press("e")
        await settle(pilot)
        assert screen.index == 1
        assert "✗ llm#2 failed here" in text_of(screen.query_one("#seen-title"))


async def test_given_a_complete_run_when_the_timeline_opens_then_no_failure_shows(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0]) as pilot:
        screen = pilot.app.screen
        assert not screen.query_one("#failure").display
        assert screen.check_action("failure", ()) is False
        assert not any(h.failed for h in screen.query_one(IterationStrip).heads.values())


def test_given_a_failed_run_when_the_timeline_shows_then_it_matches(
    snap_compare: Snap, failed_store: Path,
) -> None:
    async def run_before(pilot: object) -> None:
        await settle(pilot)  # type: ignore[arg-type]

    assert snap_compare(LensApp(failed_store, run="last"), run_before=run_before,
                        terminal_size=SIZE)


LONG_ERROR = "upstream said 502: " + " ".join(f"line-{k}" for k in range(400)) + " END-OF-LONG"


@pytest.fixture
def long_failure(tmp_path: Path) -> Path:
    """A store holding one run whose first model call raised :data:`LONG_ERROR`."""
    from footprint import Agent, FunctionModel, RunError
    from recorder import ParquetSink, Recorder

    def brain(request: object) -> str:
        raise RuntimeError(LONG_ERROR)

    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec, pytest.raises(RunError, match="END-OF"):
        Agent(provider=FunctionModel(brain), model="m", sink=rec).run_sync("hi")
    return tmp_path


async def test_given_an_error_longer_than_the_box_when_the_timeline_opens_then_it_scrolls_whole(
    long_failure: Path,
) -> None:
    from textual.containers import VerticalScroll
    from textual.widgets import Static

    async with lens_on(long_failure) as pilot:
        screen = pilot.app.screen
        text = screen.query_one("#failure", Static)
        assert LONG_ERROR in text_of(text)
        needed = len(LONG_ERROR) // text.size.width  # the lines the message wraps to, at least
        assert text.size.height > needed  # laid out whole, not cut at the box's height
        box = screen.query_one("#failure-box", VerticalScroll)
        assert box.display and box.size.height <= 12  # the run's blocks keep the screen
        assert box.max_scroll_y >= text.size.height - 12
        box.scroll_end(animate=False)
        await settle(pilot)
        assert box.scroll_y == box.max_scroll_y > 0


HOSTILE = "\x1b[2J\x1b]0;pwned\x07"
"""A model name, an answer or an error holding escape codes (clear screen, retitle)."""


@pytest.fixture
def hostile_store(tmp_path: Path) -> Path:
    from footprint import Agent, FunctionModel, RunError
    from recorder import ParquetSink, Recorder

    def raises(request: object) -> str:
        raise RuntimeError(f"503 {HOSTILE} end")

    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        Agent(provider=FunctionModel(lambda r: f"ok {HOSTILE}"), model=f"m{HOSTILE}",
              sink=rec).run_sync("hi")
        with pytest.raises(RunError):
            Agent(provider=FunctionModel(raises), model="m", sink=rec).run_sync("hi")
    return tmp_path


async def test_given_recorded_escape_codes_when_the_lens_draws_them_then_they_show_escaped(
    hostile_store: Path,
) -> None:
    from lens.tui._runs import RunLines

    async with lens_on(hostile_store, None) as pilot:
        lines = pilot.app.screen.query_one(RunLines)
        drawn = "\n".join(lines.render_line(y).text for y in range(lines.size.height))
        assert "\x1b" not in drawn and "\x07" not in drawn
        assert r"m\x1b[2J" in drawn and r"ok \x1b[2J" in drawn
    async with lens_on(hostile_store) as pilot:  # the failed run, last
        shown = text_of(pilot.app.screen.query_one("#failure"))
        assert "\x1b" not in shown and r"503 \x1b[2J\x1b]0;pwned\x07 end" in shown
