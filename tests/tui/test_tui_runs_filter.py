"""The runs screen's filter line: ``/``, ``key=value`` terms, ``enter``; errors shown inline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_tui_snapshots import keys
from textual.widgets import Input, Static
from tui_support import SIZE, lens_on, settle, text_of

from footprint import Agent, ScriptedModel, SeededIds, StepClock
from lens.tui import LensApp
from lens.tui._runs import RunLines, RunsScreen
from recorder import ParquetSink, Recorder, feedback


def _record(path: Path) -> list[str]:
    ids = []
    with Recorder(sinks=[ParquetSink(path)]) as rec:
        for i in range(6):
            agent = Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec,
                          release="1.4" if i % 2 else "1.3", clock=StepClock(),
                          ids=SeededIds(i))
            ids.append(agent.run_sync("hi", user=f"u-{i % 2}").run_id)
    for i, value in ((1, 0), (2, 0), (3, 1)):
        feedback(path, ids[i], "helpful", value=value, at=10**18 + i)
    return ids


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Six runs, releases 1.3/1.4 alternating; thumbs-down on runs 1 and 2, up on 3."""
    path = tmp_path_factory.mktemp("labelled") / "store"
    return path, _record(path)


def test_given_two_labelled_recordings_when_compared_then_their_run_ids_match(
    labelled: tuple[Path, list[str]], tmp_path: Path,
) -> None:
    assert _record(tmp_path / "store") == labelled[1]  # the snapshot shows them


def test_given_a_filter_when_the_runs_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], labelled: tuple[Path, list[str]],
) -> None:
    assert snap_compare(LensApp(labelled[0]), terminal_size=SIZE,
                        run_before=keys("slash", *"release=1.4 score=helpful<1", "enter"))


async def test_given_the_runs_screen_when_a_filter_is_typed_then_only_those_runs_list(
    labelled: tuple[Path, list[str]],
) -> None:
    path, ids = labelled
    async with lens_on(path, None) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, RunsScreen)
        lines = screen.query_one(RunLines)
        assert lines.count == 6 and not screen.query_one("#where", Input).display
        await pilot.press("slash")
        assert screen.query_one("#where", Input).has_focus
        await pilot.press(*"release=1.4 score=helpful<1", "enter")
        await settle(pilot)
        assert [lines.run_id(i) for i in range(lines.count)] == [ids[1]]
        assert "filter: release=1.4 score=helpful<1" in text_of(screen.query_one("#hint", Static))
        assert "6 runs, 1 match the filter" in text_of(screen.query_one("LensHeader", Static))
        screen.query_one("#where", Input).value = ""
        await pilot.press("slash", "enter")
        await settle(pilot)
        assert lines.count == 6 and not screen.query_one("#where", Input).display


async def test_given_a_bad_filter_when_entered_then_the_hint_quotes_it_and_the_list_stays(
    labelled: tuple[Path, list[str]],
) -> None:
    path, _ = labelled
    async with lens_on(path, None) as pilot:
        screen = pilot.app.screen
        await pilot.press("slash", *"score=helpful<<1", "enter")
        await settle(pilot)
        hint = text_of(screen.query_one("#hint", Static))
        assert "score filter 'helpful<<1' is not NAME OP VALUE" in hint
        assert screen.query_one(RunLines).count == 6
