"""Driving the lens with a Pilot: runs → timeline → decisions → skills → why → SQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static, TabbedContent
from tui_support import lens_on, settle, text_of

from footprint._errors import ConfigError
from lens.tui import LensApp
from lens.tui._decisions import DecisionsScreen
from lens.tui._eventlist import EventLines
from lens.tui._runs import RunLines, RunsScreen, cells
from lens.tui._skills import SkillLines, SkillsScreen
from lens.tui._sql import SqlLines, SqlScreen
from lens.tui._timeline import TimelineScreen
from lens.tui._why import WhyScreen


async def test_given_the_runs_table_when_enter_is_pressed_then_the_timeline_of_that_run_opens(
    desk_store: tuple[Path, str],
) -> None:
    path, run_id = desk_store
    async with lens_on(path, None) as pilot:
        app = pilot.app
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one(RunLines)
        assert table.count == 1 and cells(table.rows[0])[1] == run_id[:13] + "…"
        assert table.run_id(0) == run_id and cells(table.rows[0])[2] == "complete"
        assert run_id[:13] in table.render_line(0).text
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        header = text_of(app.screen.query_one("LensHeader", Static))
        assert run_id in header and "desk-standard" in header and "complete" in header
        assert "APPROVED" in header


async def test_given_the_timeline_when_iteration_keys_are_pressed_then_the_selection_moves(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0]) as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, TimelineScreen) and screen.index == 0
        await pilot.press("left")
        assert screen.index == 0
        await pilot.press("right", "right_square_bracket")
        assert screen.index == 2
        await pilot.press("left_square_bracket")
        assert screen.index == 1
        await pilot.press("G")
        assert screen.index == len(screen.outline) - 1 == 5
        await pilot.press("right")
        assert screen.index == 5
        await pilot.press("g")
        assert screen.index == 0
        await settle(pilot)
        title = text_of(screen.query_one("#seen-title", Static))
        assert "iteration 1" in title and "llm#1" in title


async def test_given_a_block_when_highlighted_then_the_inspector_names_hash_reason_and_admitter(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0]) as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        await pilot.press("right", "right")  # iteration 3: billing → refund by route
        await settle(pilot)
        blocks = screen.query_one("#blocks-system-prompt", OptionList)
        blocks.highlighted = 1  # the refund skill, moved in by the route
        await pilot.pause()
        inspector = text_of(screen.query_one("#inspector", Static))
        assert "injection: refund" in inspector and "admitted via: cursor" in inspector
        assert "context.evaluated" in inspector and "billing → refund by route" in inspector
        assert "content hash:" in inspector and "reason:" in inspector
        await pilot.press("3")
        assert screen.query_one(TabbedContent).active == "tab-tools"
        assert "slot: tools #0" in text_of(screen.query_one("#inspector", Static))
        await pilot.press("2")
        assert "origin: seq" in text_of(screen.query_one("#inspector", Static))


async def test_given_the_decisions_screen_when_a_prefix_is_typed_then_only_those_events_list(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0], settled=False) as pilot:
        app = pilot.app
        await pilot.press("d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DecisionsScreen)
        lines = screen.query_one(EventLines)
        total = lines.rows.total
        assert len(lines.rows) == total > 100
        await pilot.press("slash", *"skill.rej", "enter")
        await settle(pilot)
        assert len(lines.rows) == 2
        assert "skill.rejected" in lines.render_line(0).text
        assert text_of(screen.query_one("#count", Static)).strip().startswith(f"2 of {total}")
        await pilot.press("down")
        await settle(pilot)
        payload = text_of(screen.query_one("#payload", Static))
        assert "skill.rejected payload" in payload and '"posture"' in payload
        screen.query_one(Input).value = ""
        await pilot.pause()
        assert len(lines.rows) == total


async def test_given_a_run_when_s_and_w_are_pressed_then_skills_and_why_show_their_evidence(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0], settled=False) as pilot:
        app = pilot.app
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SkillsScreen)
        walk = app.screen.query_one(SkillLines)
        shown = [walk.render_line(y).text for y in range(walk.count)]
        assert any("billing → refund by route" in line for line in shown)
        assert any("allowed: refund, triage" in line for line in shown)
        move = next(i for i, line in enumerate(shown) if "billing → refund by route" in line)
        walk.go(move)
        await settle(pilot)
        evidence = text_of(app.screen.query_one("#evidence", Static))
        assert "guard billing → refund on lookup_order: passed" in evidence
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, WhyScreen)
        assert "CORRELATIONAL" in text_of(app.screen.query_one("#chain", Static))
        assert "legacy-window-fact" in text_of(app.screen.query_one("#piece", Static))
        note = text_of(app.screen.query_one("#causal", Static))
        assert "Only counterfactual re-runs can say \"caused\"" in note
        await pilot.press("escape")
        assert isinstance(app.screen, TimelineScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_given_the_sql_console_when_good_then_bad_queries_run_then_rows_then_inline_error(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0], None, settled=False) as pilot:
        app = pilot.app
        await pilot.press("colon")
        assert isinstance(app.screen, SqlScreen)
        query = app.screen.query_one(Input)
        query.value = "SELECT iteration, injection_id FROM injections WHERE admitted_via = 'rule'"
        await pilot.press("enter")
        await settle(pilot)
        table = app.screen.query_one(SqlLines)
        assert table.count == 8 and "8 rows" in text_of(app.screen.query_one("#status"))
        assert text_of(app.screen.query_one("#columns", Static)).split() == [
            "iteration", "injection_id"]
        assert table.render_line(0).text.split()[1] in {"calm-angry-customer", "skill-steps-hint"}
        query.value = "SELECT nope FROM nowhere"
        await pilot.press("enter")
        await settle(pilot)
        status = text_of(app.screen.query_one("#status", Static))
        assert status.startswith("error:") and "nowhere" in status
        assert table.count == 0 and app.is_running
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_given_no_run_selected_when_a_run_screen_key_is_pressed_then_the_runs_stay(
    desk_store: tuple[Path, str],
) -> None:
    async with lens_on(desk_store[0], None) as pilot:
        app = pilot.app
        app.screen.query_one(RunLines).blur()
        await pilot.press("w")
        assert isinstance(app.screen, RunsScreen)
        assert any("open a run first" in n.message for n in app._notifications)


def test_given_an_unknown_run_when_the_app_is_built_then_a_config_error_suggests_ids(
    desk_store: tuple[Path, str], tmp_path: Path,
) -> None:
    path, run_id = desk_store
    with pytest.raises(ConfigError, match="did you mean") as err:
        LensApp(path, run=run_id[:-1] + ("0" if run_id[-1] != "0" else "1"))
    assert "footprint runs" in str(err.value)
    with pytest.raises(ConfigError, match="no footprint store"):
        LensApp(tmp_path / "missing")
