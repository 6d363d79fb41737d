"""SVG snapshots of the main screens at 120×40, over the deterministic support-desk store.

Update after an intended change with ``pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from tui_support import SIZE, record_desk, settle

from lens.tui import LensApp

Snap = Callable[..., bool]


def keys(*pressed: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Before the snapshot: let the lens read, press ``pressed``, let it read again."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press(*pressed)
        await settle(pilot)

    return run_before


def test_given_two_recordings_when_run_ids_are_compared_then_they_match(
    desk_store: tuple[Path, str], tmp_path: Path,
) -> None:
    # snapshots show the run id: it must come out the same on every recording
    again = record_desk(tmp_path / "store")
    assert again == desk_store[1]
    assert desk_store[1][14] == "7", "a UUIDv7"


def test_given_the_desk_store_when_the_runs_screen_shows_then_it_matches(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    assert snap_compare(LensApp(desk_store[0]), run_before=keys(), terminal_size=SIZE)


def test_given_iteration_3_when_the_timeline_shows_then_it_matches(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    app = LensApp(desk_store[0], run="last")
    assert snap_compare(app, run_before=keys("right", "right"), terminal_size=SIZE)


def test_given_a_skill_filter_when_the_decisions_show_then_it_matches(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    app = LensApp(desk_store[0], run="last", view="decisions")
    assert snap_compare(app, run_before=keys("slash", *"skill.", "enter", "down", "down"),
                        terminal_size=SIZE)


def test_given_the_run_when_the_skills_screen_shows_then_it_matches(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    assert snap_compare(LensApp(desk_store[0], run="last", view="skills"),
                        run_before=keys(*["down"] * 14), terminal_size=SIZE)


def test_given_the_answer_when_the_why_screen_shows_then_it_matches(
    snap_compare: Snap, desk_store: tuple[Path, str],
) -> None:
    assert snap_compare(LensApp(desk_store[0], run="last", view="why"), run_before=keys(),
                        terminal_size=SIZE)
