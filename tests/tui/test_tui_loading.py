"""Loading never blocks: while a read waits for the store, the screen shows it, and q quits at once.

The store's one connection is held by the test (as a long query would hold
it), so the screens' own reads wait on their workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_support import SIZE, settle

from lens.tui import LensApp, View
from lens.tui._decisions import DecisionsScreen
from lens.tui._lines import VirtualList
from lens.tui._skills import SkillsScreen
from lens.tui._timeline import TimelineScreen

Snap = Callable[..., bool]


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
@pytest.mark.parametrize("view", ["timeline", "decisions", "skills"])
async def test_given_a_read_that_does_not_end_when_q_is_pressed_then_the_lens_exits_at_once(
    desk_store: tuple[Path, str], view: View, key: str,
) -> None:
    app = LensApp(desk_store[0], run="last", view=view)
    lock = app.state.gate.lock
    lock.acquire()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, TimelineScreen | DecisionsScreen | SkillsScreen)
            listing = screen.query_one(VirtualList)
            assert listing.loading, "the screen says it is still reading"
            started = time.perf_counter()
            await pilot.press(key)
        took = time.perf_counter() - started
    finally:
        lock.release()
    assert app.return_code == 0
    assert took < 2.0, f"quitting took {took:.2f} s while a read was waiting"


async def test_given_a_slow_read_when_keys_are_pressed_then_they_act_before_it_ends(
    desk_store: tuple[Path, str],
) -> None:
    app = LensApp(desk_store[0], run="last")
    lock = app.state.gate.lock
    lock.acquire()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, TimelineScreen)
            await pilot.press("d")
            assert isinstance(app.screen, DecisionsScreen), "d opened the decisions meanwhile"
            count = app.screen.query_one("#count", Static)
            assert "reading the index of 160 events" in str(count.content)
            lock.release()
            await settle(pilot)
            assert "160 of 160 events" in str(count.content)
            await pilot.press("t")
            await settle(pilot)
            assert isinstance(app.screen, TimelineScreen) and app.screen.shown is not None
            lock.acquire()
    finally:
        lock.release()


def test_given_a_read_in_progress_when_the_timeline_opens_then_the_loading_state_shows(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    app = LensApp(desk_store[0], run="last")
    app.animation_level = "none"
    lock = app.state.gate.lock
    lock.acquire()
    try:
        assert snap_compare(app, terminal_size=SIZE)
    finally:
        lock.release()


def test_given_a_read_in_progress_when_the_decisions_open_then_the_loading_state_shows(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    app = LensApp(desk_store[0], run="last", view="decisions")
    app.animation_level = "none"
    lock = app.state.gate.lock
    lock.acquire()
    try:
        assert snap_compare(app, terminal_size=SIZE)
    finally:
        lock.release()
