"""The runs screen's cost column (priced as ``footprint runs`` prices, a block at a time, off the
UI thread) and its red error cell for a failed run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from failed_runs import record_failed
from test_tui_snapshots import keys
from tui_support import SIZE, lens_on, record_desk, settle

from footprint import Agent, ScriptedModel, SeededIds, StepClock
from lens.tui import LensApp
from lens.tui._runs import COLUMNS, RunLines, RunsScreen, cells
from lens.tui._state import RUN_FIELDS, LensState
from recorder import ParquetSink, Recorder, list_runs, open_store
from recorder.store._prices import usd


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The support desk's complete run (model ``desk-standard``: unpriced) and a failed run
    of ``gpt-4o-mini`` (priced): path, desk run id, failed run id."""
    path = tmp_path_factory.mktemp("mixed") / "store"
    failed = record_failed(path)  # first: it names the store's first run
    return path, record_desk(path), failed


def _listed(path: Path) -> dict[str, dict[str, object]]:
    """``footprint runs``'s rows (``list_runs``), by run id."""
    with open_store(path) as store:
        return {str(r["run_id"]): r for r in list_runs(store).to_pylist()}


def _line(lines: RunLines, run_id: str) -> list[str]:
    """The cells of ``run_id``'s line as the list paints it."""
    index = next(i for i in range(lines.count) if lines.run_id(i) == run_id)
    segments = lines.item_segments(index, 0)
    assert segments is not None
    return [s.text.strip() for s in segments]


async def test_given_priced_and_unpriced_runs_when_listed_then_each_costs_what_runs_prints(
    mixed_store: tuple[Path, str, str],
) -> None:
    path, desk, failed = mixed_store
    listed = _listed(path)
    async with lens_on(path, None) as pilot:
        lines = pilot.app.screen.query_one(RunLines)
        for run_id in (desk, failed):
            row = listed[run_id]
            shown = _line(lines, run_id)[COLUMNS.index("cost")]
            assert shown == usd(row["cost_usd"], row["unpriced_calls"])  # type: ignore[arg-type]
        assert _line(lines, desk)[COLUMNS.index("cost")] == "unpriced"
        assert _line(lines, failed)[COLUMNS.index("cost")].startswith("$0.0000")


async def test_given_a_failed_run_when_listed_then_its_last_cell_is_the_error_in_red(
    mixed_store: tuple[Path, str, str],
) -> None:
    path, desk, failed = mixed_store
    async with lens_on(path, None) as pilot:
        lines = pilot.app.screen.query_one(RunLines)
        index = next(i for i in range(lines.count) if lines.run_id(i) == failed)
        last = lines.item_segments(index, 0)[-1]  # type: ignore[index]
        assert last.text.startswith("✗ llm#2 RunError: ")
        assert last.style is not None and last.style.color is not None
        assert last.style.color.name == "red"
        answer = _line(lines, desk)[-1]
        assert answer.startswith("APPROVED") and "✗" not in answer


@pytest.fixture(scope="module")
def nine_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nine one-call runs of an unknown model ``m``."""
    path = tmp_path_factory.mktemp("nine") / "store"
    with Recorder(sinks=[ParquetSink(path)]) as rec:
        for i in range(9):
            Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec,
                  clock=StepClock(), ids=SeededIds(i)).run_sync("hi")
    return path


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The run ids the runs screen asks the state to price, one list a call."""
    calls: list[list[str]] = []
    priced = LensState.costs

    def costs(self: LensState, run_ids: list[str]) -> dict[str, tuple[float | None, int]]:
        calls.append(list(run_ids))
        return priced(self, run_ids)

    monkeypatch.setattr(LensState, "costs", costs)
    return calls


async def test_given_more_runs_than_a_block_when_listed_then_only_blocks_on_screen_are_priced(
    nine_runs: Path, monkeypatch: pytest.MonkeyPatch, asked: list[list[str]],
) -> None:
    monkeypatch.setattr("lens.tui._runs.COST_BLOCK", 2)
    app = LensApp(nine_runs)
    async with app.run_test(size=(120, 10)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        lines = screen.query_one(RunLines)
        height = lines.scrollable_content_region.height
        assert lines.count == 9 and height < 8
        assert all(len(ids) <= 2 for ids in asked)
        on_screen = {lines.run_id(i) for i in range(height)}
        assert on_screen <= set(lines.costs) and lines.run_id(8) not in lines.costs
        await pilot.press("end")
        await settle(pilot)
        assert set(lines.costs) == {lines.run_id(i) for i in range(9)}
        assert all(c == (None, 1) for c in lines.costs.values())  # model "m" is unpriced
        assert sorted(i for ids in asked for i in ids) == sorted(lines.costs)  # once each


def test_given_a_failed_and_a_complete_run_when_the_runs_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], mixed_store: tuple[Path, str, str],
) -> None:
    assert snap_compare(LensApp(mixed_store[0]), run_before=keys(), terminal_size=SIZE)


def test_given_a_row_not_priced_yet_when_formatted_then_its_cost_is_pending() -> None:
    row = ("2026-01-01 00:00:00", "r" * 36, "failed", 2, 54, "gpt-4o-mini", 22, None,
           "RunError", "upstream\n said 503", "llm#2", None, None, [], None, None)
    shown = dict(zip(COLUMNS, cells(row, None, last=60), strict=True))
    assert shown["cost"] == "…"
    assert shown["answer / error"] == "✗ llm#2 RunError: upstream said 503"
    assert dict(zip(COLUMNS, cells(row, (None, 1)), strict=True))["cost"] == "unpriced"


async def test_given_a_run_that_changed_when_the_list_is_read_again_then_only_it_is_priced_again(
    nine_runs: Path, asked: list[list[str]],
) -> None:
    async with lens_on(nine_runs, None) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, RunsScreen)
        lines = screen.query_one(RunLines)
        assert len(lines.costs) == 9
        asked.clear()
        rows = list(lines.rows)
        grown = list(rows[4])
        grown[RUN_FIELDS.index("events")] += 5  # as a --follow tick sees a run grow
        rows[4] = tuple(grown)
        screen._fill(rows)
        await settle(pilot)
        assert asked == [[lines.run_id(4)]] and len(lines.costs) == 9
        screen._fill(list(rows))  # the same rows again: nothing is priced
        await settle(pilot)
        assert asked == [[lines.run_id(4)]]
