"""Keys repaint without laying the screen out again: the footer and fitted text boxes."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual.widgets._footer import FooterKey
from tui_support import lens_on, settle

from lens.tui._base import LensFooter, update_fitted
from lens.tui._decisions import DecisionsScreen
from lens.tui._timeline import TimelineScreen


def _keys(app: App[None]) -> list[FooterKey]:
    return list(app.screen.query_one(LensFooter).query(FooterKey))


async def test_given_the_timeline_when_iterations_change_then_the_footer_keys_are_kept(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0]) as pilot:
        app = pilot.app
        assert isinstance(app.screen, TimelineScreen)
        before = _keys(app)
        assert before and any(k.description == "Next iter" for k in before)
        await pilot.press("right", "tab", "left")  # a step, a focus change, a step
        await settle(pilot)
        assert _keys(app) == before  # the same widgets: no rebuild


async def test_given_another_screen_when_its_keys_differ_then_its_footer_shows_them(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0]) as pilot:
        app = pilot.app
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DecisionsScreen)
        assert "Filter" in [k.description for k in _keys(app)]


class _Boxed(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("one\ntwo", id="box")


async def test_given_a_fitted_box_when_the_height_is_the_same_then_no_layout_is_asked() -> None:
    app = _Boxed()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        box = app.query_one("#box", Static)
        update_fitted(box, Text("three\nfour"))
        assert not box._layout_required
        await pilot.pause()
        assert box.size.height == 2


async def test_given_a_fitted_box_when_the_text_grows_then_the_box_grows() -> None:
    app = _Boxed()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        box = app.query_one("#box", Static)
        update_fitted(box, Text("a\nb\nc\nd"))
        await pilot.pause()
        assert box.size.height == 4
        update_fitted(box, Text("x " * 50))  # wraps at the box's width
        await pilot.pause()
        assert box.size.height == len(Text("x " * 50).wrap(app.console, box.size.width))


async def test_given_a_step_when_another_tab_opens_then_it_lists_that_iterations_blocks(
    desk_store: tuple[Path, str],
) -> None:
    from textual.widgets import OptionList

    from lens.tui._timeline import block_prompt

    async with lens_on(desk_store[0]) as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        await pilot.press("right", "right")
        await settle(pilot)
        assert screen.shown is not None and screen.index == 2
        for key, slot in (("2", "messages"), ("3", "tools"), ("1", "system-prompt")):
            await pilot.press(key)
            await settle(pilot)
            listed = screen.query_one(f"#blocks-{slot}", OptionList)
            blocks = screen.shown.slot(slot)
            assert listed.option_count == len(blocks)  # dividers are not options
            assert [str(listed.get_option_at_index(i).prompt) for i in range(len(blocks))] == [
                str(block_prompt(b)) for b in blocks]
            assert listed.highlighted == (0 if blocks else None)
