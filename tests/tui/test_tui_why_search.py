"""The why screen runs the causal search in place: on a worker, with progress and cancel,
its report cached in the store; a failed run leads with its failing step."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import why_slow_agent
from planted_support import ROOT, load, record, ref
from textual.pilot import Pilot
from textual.widgets import OptionList, Static
from tui_support import SIZE, lens_on, settle, text_of

from footprint import Agent, FunctionModel, RunError, StepClock
from footprint.providers import LLMRequest, Reply
from lens.explain._cache import load_report
from lens.explain._report import headline
from lens.tui import LensApp
from lens.tui._why import WhyScreen
from lens.tui._whyread import causal_search
from recorder import ParquetSink, Recorder, open_store

WRONG_FACT = ref("wrong_fact")


@pytest.fixture(scope="module")
def searched_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wrong-fact store with its report already searched and cached (once per module, by
    the same function the why screen's worker runs)."""
    store = tmp_path_factory.mktemp("searched") / "store"
    with contextlib.chdir(ROOT):
        record("wrong_fact", store)
        with open_store(store) as opened:
            run_id = opened.resolve_run("last")
        causal_search(store, run_id, WRONG_FACT, tick=lambda *_: None, cancelled=lambda: False)
    return store


@pytest.fixture
def searched_store(searched_template: Path, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of ``searched_template`` (a test may damage its cache)."""
    monkeypatch.chdir(ROOT)
    return Path(shutil.copytree(searched_template, tmp_path / "store"))


@pytest.fixture
def planted_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The wrong-fact example recorded into a fresh store; agent references resolve from the
    repository root, as a user types them there."""
    monkeypatch.chdir(ROOT)
    store = tmp_path / "store"
    record("wrong_fact", store)
    return store


def _why(pilot: Pilot[Any]) -> WhyScreen:
    screen = pilot.app.screen
    assert isinstance(screen, WhyScreen)
    return screen


def _shown(screen: WhyScreen, widget: str) -> str:
    return text_of(screen.query_one(widget, Static))


async def _search(pilot: Pilot[Any]) -> WhyScreen:
    await pilot.press("w")
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot, seconds=60)
    return _why(pilot)


async def test_given_a_planted_run_and_its_agent_when_the_search_runs_then_verdicts_appear(
    planted_store: Path,
) -> None:
    async with lens_on(planted_store, agent=WRONG_FACT) as pilot:
        screen = await _search(pilot)
        assert screen.search is not None and screen.search.name == "why-search"
        assert screen.search.state.name == "SUCCESS"
        headline = _shown(screen, "#chain")
        assert headline.startswith("CONFIRMED: ") and "supplier-memo" in headline
        assert "\npath: fact 'supplier-memo' → answer" in headline
        listing = screen.query_one("#pieces", OptionList)
        prompts = [str(listing.get_option_at_index(i).prompt)
                   for i in range(listing.option_count)]
        assert "supplier-memo" in prompts[0] and " CAUSAL · root cause\n" in prompts[0]
        assert all("CAUSAL" not in p for p in prompts[1:])
        assert any("not confirmed — " in p and "grinder-care" in p for p in prompts)
        report = _shown(screen, "#piece")
        assert report.startswith(headline + "\n") and "baseline: " in report
        assert f"computed with agent {WRONG_FACT} · cached in why/" in _shown(screen, "#causal")
    cached = list((planted_store / "why").glob("*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["agent"] == WRONG_FACT


async def test_given_a_cached_report_when_the_why_screen_reopens_then_it_shows_at_once(
    searched_store: Path,
) -> None:
    (path,) = (searched_store / "why").glob("*.json")
    first = "\n".join(headline(load_report(path).report))  # type: ignore[arg-type]
    async with lens_on(searched_store, agent=WRONG_FACT) as pilot:
        await pilot.press("w")
        await settle(pilot)
        screen = _why(pilot)
        assert screen.search is None, "no search ran"
        assert _shown(screen, "#chain") == first
        note = _shown(screen, "#causal")
        assert note.startswith("from the cache: computed ") and f"with agent {WRONG_FACT}" in note
    async with lens_on(searched_store) as pilot:  # no agent: the run's newest report
        await pilot.press("w")
        await settle(pilot)
        assert _shown(_why(pilot), "#chain") == first


async def test_given_a_damaged_cache_file_when_the_why_screen_opens_then_one_notice_says_so(
    searched_store: Path,
) -> None:
    (path,) = (searched_store / "why").glob("*.json")
    data = json.loads(path.read_text())
    data["report"]["mode"] = "GUESSED"
    path.write_text(json.dumps(data))
    async with lens_on(searched_store, agent=WRONG_FACT) as pilot:
        await pilot.press("w")
        await settle(pilot)
        screen = _why(pilot)
        notices = [n.message for n in pilot.app._notifications]
        assert len([m for m in notices if "is not a valid report" in m]) == 1
        assert screen.report is None and "CORRELATIONAL" in _shown(screen, "#chain")
        assert _shown(screen, "#causal").startswith(
            "Only counterfactual re-runs can say \"caused\": press a to run them")


async def _ticking(pilot: Pilot[Any], screen: WhyScreen) -> None:
    started = time.monotonic()
    while "re-run " not in _shown(screen, "#search-what"):
        assert time.monotonic() - started < 30, "the search never reported a re-run"
        await asyncio.sleep(0.01)
    await pilot.pause()


async def test_given_a_running_search_when_esc_is_pressed_then_it_stops_and_caches_nothing(
    planted_store: Path,
) -> None:
    async with lens_on(planted_store, agent="why_slow_agent:make_agent") as pilot:
        await pilot.press("w")
        await settle(pilot)
        screen = _why(pilot)
        await pilot.press("a")
        await _ticking(pilot, screen)
        assert screen.query_one("#search").has_class("-running")
        await pilot.press("escape")
        at_cancel = len(why_slow_agent.CALLS)
        assert pilot.app.screen is screen, "esc cancelled the search, it did not leave"
        assert screen.search is not None and screen.search.is_cancelled
        assert not screen.query_one("#search").has_class("-running")
        await asyncio.sleep(10 * why_slow_agent.DELAY_S)
        assert len(why_slow_agent.CALLS) <= at_cancel + 1, "re-runs went on after esc"
        assert screen.report is None
        await pilot.press("escape")  # no search now: esc goes back
        assert pilot.app.screen is not screen
    assert not (planted_store / "why").exists()


async def test_given_a_run_built_with_a_factory_when_the_why_screen_opens_then_it_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    store = tmp_path / "store"
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        await load("wrong_fact").make_agent(sink=recorder).variant(factory=WRONG_FACT).run(
            "How much does the C40 grinder cost?")
    finally:
        recorder.close()
    async with lens_on(store) as pilot:
        await pilot.press("w")
        await settle(pilot)
        assert _shown(_why(pilot), "#causal").startswith(
            f"Only counterfactual re-runs can say \"caused\": press a to run them (the causal "
            f"search) with agent {WRONG_FACT}")


async def test_given_no_agent_when_the_why_screen_opens_then_it_says_what_to_pass(
    planted_store: Path,
) -> None:
    async with lens_on(planted_store) as pilot:
        await pilot.press("w")
        await settle(pilot)
        screen = _why(pilot)
        note = _shown(screen, "#causal")
        assert "footprint lens " in note and "--agent examples/planted/" in note
        await pilot.press("a")
        await settle(pilot)
        assert screen.search is None
        assert any("--agent" in n.message for n in pilot.app._notifications)


def _raises(request: LLMRequest) -> Reply:
    raise ValueError("the reply parser found no 'Reply format:' line")


async def test_given_a_failed_run_when_the_why_screen_opens_then_it_explains_the_failing_step(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        with pytest.raises(RunError, match="provider 'parser' raised ValueError"):
            await Agent(provider=FunctionModel(_raises, name="parser"), model="small",
                        sink=recorder, clock=StepClock()).run("Will my card cover it?")
    finally:
        recorder.close()
    async with lens_on(store, view="why") as pilot:
        chain = _shown(_why(pilot), "#chain")
    assert chain.startswith("RUN FAILED  RunError at stage ")
    assert "ValueError: the reply parser found no 'Reply format:' line" in chain
    assert "the model call that raised: llm#1 · parser/small" in chain
    assert "no model call" not in chain


def test_given_a_finished_search_when_the_why_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], planted_store: Path,
) -> None:
    async def search(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot, seconds=60)

    app = LensApp(planted_store, run="last", view="why", agent=WRONG_FACT)
    assert snap_compare(app, run_before=search, terminal_size=SIZE)


async def test_given_an_agent_that_cannot_load_when_the_search_starts_then_one_notice_says_why(
    planted_store: Path,
) -> None:
    async with lens_on(planted_store, agent="lens._examples.support_desk:make_agnet") as pilot:
        await pilot.press("w")
        await settle(pilot)
        screen = _why(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert screen.search is not None and screen.search.state.name == "ERROR"
        assert screen.report is None
        assert not screen.query_one("#search").has_class("-running")
        stopped = [n.message for n in pilot.app._notifications
                   if n.message.startswith("the causal search stopped: ")]
        assert len(stopped) == 1 and "did you mean 'make_agent'" in stopped[0]
