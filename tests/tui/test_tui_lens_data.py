"""The lens's sessions and experiments screens, and the runs screen's label columns.

Over the helpdesk store of ``lens_data_support`` (seeded: the same on every
recording): sessions list their runs in order with scores, a run opens from a
session and ``escape`` comes back; experiments list, open and compare, the
regressed items first with the cause ``experiment compare`` names.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lens_data_support import record_lens_data
from textual.pilot import Pilot
from textual.widgets import Static
from tui_support import SIZE, lens_on, settle, text_of

from lens.tui import LensApp
from lens.tui._compare import CompareScreen, PairScreen
from lens.tui._experiments import ExperimentScreen, ExperimentsScreen
from lens.tui._runs import LABEL_COLUMNS, RunLines, RunsScreen, cells
from lens.tui._sessions import SessionScreen, SessionsScreen
from lens.tui._table import TableLines
from lens.tui._timeline import TimelineScreen

Snap = Callable[..., bool]


def steps(*pressed: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Before a snapshot: each key once the lens has read what the one before asked for."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            await settle(pilot)

    return run_before


@pytest.fixture(scope="module")
def helpdesk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The helpdesk store: path, production run ids."""
    path = tmp_path_factory.mktemp("helpdesk") / "store"
    return path, record_lens_data(path)


def _table(pilot: object) -> TableLines:
    return pilot.app.screen.query_one(TableLines)  # type: ignore[attr-defined, no-any-return]


def _texts(table: TableLines, column: str) -> list[str]:
    at = [c.title for c in table.columns].index(column)
    return [row[at][0] for row in table.rows]


def test_given_two_recordings_when_compared_then_their_run_ids_match(
    helpdesk: tuple[Path, list[str]], tmp_path: Path,
) -> None:
    assert record_lens_data(tmp_path / "store") == helpdesk[1]  # the snapshots show them


async def test_given_labelled_runs_when_c_is_pressed_then_user_session_tags_release_scores_show(
    helpdesk: tuple[Path, list[str]],
) -> None:
    path, ids = helpdesk
    async with lens_on(path, None) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, RunsScreen)
        lines = screen.query_one(RunLines)
        await pilot.press("c")
        assert lines.columns == LABEL_COLUMNS
        assert "session" in text_of(screen.query_one("#columns", Static))
        shown = dict(zip(LABEL_COLUMNS, cells(lines.rows[1], columns=LABEL_COLUMNS),
                         strict=True))
        assert shown["user"] == "customer-1" and shown["session"] == "chat-0"
        assert shown["release"] == "1.0" and shown["tags"] == "prod"
        assert shown["scores"] == "expected=3 days…"  # clipped to its column
        assert cells(lines.rows[1], columns=LABEL_COLUMNS, last=60)  # the row stays whole
        await pilot.press("slash", *"session=chat-1 score=helpful<1", "enter")
        await settle(pilot)
        assert [lines.run_id(i) for i in range(lines.count)] == [ids[6], ids[9]]


async def test_given_sessions_when_one_is_opened_then_its_runs_show_in_order_and_open(
    helpdesk: tuple[Path, list[str]],
) -> None:
    path, ids = helpdesk
    async with lens_on(path, None) as pilot:
        await pilot.press("S")
        await settle(pilot)
        assert isinstance(pilot.app.screen, SessionsScreen)
        table = _table(pilot)
        assert _texts(table, "session")[:2] == ["chat-0", "chat-1"]
        assert _texts(table, "kind") == ["session", "session", "conversation"]
        assert _texts(table, "runs") == ["5", "5", "2"]
        assert _texts(table, "mean scores")[:2] == ["helpful=0.6", "helpful=0.6"]
        await pilot.press("down", "enter")
        await settle(pilot)
        session = pilot.app.screen
        assert isinstance(session, SessionScreen) and session.run_ids == ids[5:10]
        said = _texts(_table(pilot), "message → answer / error")
        assert said[0] == "How long does shipping to Prague take? → Standard shipping takes 3 days."
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TimelineScreen)
        assert pilot.app.state.run_id == ids[6]
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is session
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, SessionsScreen)


async def test_given_experiments_when_one_is_opened_then_each_item_shows_its_verdict(
    helpdesk: tuple[Path, list[str]],
) -> None:
    path, _ = helpdesk
    async with lens_on(path, None) as pilot:
        await pilot.press("E")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ExperimentsScreen)
        table = _table(pilot)
        assert _texts(table, "experiment") == ["baseline", "changed"]
        assert _texts(table, "passed") == ["20/20", "17/20"]
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ExperimentScreen)
        passes = _texts(_table(pilot), "pass")
        assert passes.count("no") == 3 and passes.count("yes") == 17


async def test_given_two_experiments_when_compared_then_regressions_come_first_with_cause(
    helpdesk: tuple[Path, list[str]],
) -> None:
    path, _ = helpdesk
    async with lens_on(path, None) as pilot:
        await pilot.press("E")
        await settle(pilot)
        await pilot.press("c")  # no baseline yet: nothing is compared
        assert isinstance(pilot.app.screen, ExperimentsScreen)
        await pilot.press("b", "down", "c")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen) and not screen.explaining
        table = _table(pilot)
        assert _texts(table, "change") == ["regressed"] * 3 + ["unchanged"] * 17
        assert _texts(table, "cause")[:4] == ["returns", "returns", "returns", "—"]
        box = text_of(screen.query_one("#detail", Static))
        assert "cause: returns (removing 'returns' from B" in box
        assert "B: Sorry, opened items cannot be returned." in box
        await pilot.press("enter")
        await settle(pilot)
        pair = pilot.app.screen
        assert isinstance(pair, PairScreen)
        assert "returns#ae39d3fd" in text_of(pair.query_one("#b-lines", Static))
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TimelineScreen)
        assert pilot.app.state.run_id == pair.item.b_run
        await pilot.press("escape")
        assert pilot.app.screen is pair


def test_given_the_sessions_when_one_is_opened_then_it_matches(
    snap_compare: Snap, helpdesk: tuple[Path, list[str]],
) -> None:
    assert snap_compare(LensApp(helpdesk[0]), run_before=steps("S", "enter"),
                        terminal_size=SIZE)


def test_given_two_experiments_when_compared_then_it_matches(
    snap_compare: Snap, helpdesk: tuple[Path, list[str]],
) -> None:
    assert snap_compare(LensApp(helpdesk[0]), run_before=steps("E", "b", "down", "c"),
                        terminal_size=SIZE)


def test_given_labelled_runs_when_the_label_columns_show_then_it_matches(
    snap_compare: Snap, helpdesk: tuple[Path, list[str]],
) -> None:
    assert snap_compare(LensApp(helpdesk[0]), run_before=steps("c"), terminal_size=SIZE)


async def test_given_the_dataset_is_gone_when_compared_then_the_pairs_show_and_the_hint_says_why(
    helpdesk: tuple[Path, list[str]], tmp_path: Path,
) -> None:
    path = tmp_path / "store"
    shutil.copytree(helpdesk[0], path)
    shutil.rmtree(path / "datasets")
    async with lens_on(path, None) as pilot:
        await pilot.press("E")
        await settle(pilot)
        await pilot.press("b", "down", "c")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen) and not screen.explaining
        table = _table(pilot)
        assert _texts(table, "change")[:3] == ["regressed"] * 3
        assert _texts(table, "cause")[:3] == ["not explained"] * 3
        hint = text_of(screen.query_one("#hint", Static))
        assert "the regressions are not explained: no dataset 'helpdesk'" in hint


async def _until(pilot: Pilot[Any], check: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the lens never got there"
        await pilot.pause(0.02)


async def test_given_a_slow_explanation_when_compared_then_the_pairs_show_while_it_runs(
    helpdesk: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recorder._experiments import load_experiment, save_experiment

    path = tmp_path / "store"
    shutil.copytree(helpdesk[0], path)
    changed = load_experiment(path, "changed")
    agent = f"{Path(__file__).parent / 'gated_release.py'}:release_changed"
    save_experiment(path, dataclasses.replace(changed.meta, name="gated", agent=agent),
                    changed.results)
    gate = tmp_path / "gate"
    monkeypatch.setenv("FOOTPRINT_TEST_GATE", str(gate))
    async with lens_on(path, None) as pilot:
        await pilot.press("E")
        await settle(pilot)
        await pilot.press("b", "down", "down", "c")
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        table = screen.query_one(TableLines)
        await _until(pilot, lambda: table.count == 20)
        assert screen.explaining and _texts(table, "cause")[:3] == ["…"] * 3
        assert "explaining the regressions" in text_of(screen.query_one("#hint", Static))
        await pilot.press("down")  # the list answers keys meanwhile
        assert table.cursor == 1
        gate.touch()
        await _until(pilot, lambda: not screen.explaining)
        assert _texts(table, "cause")[:3] == ["returns"] * 3
