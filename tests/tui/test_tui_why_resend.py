"""The why screen of a run taken in from another framework's trace (issue 31, item 6): it
has no agent to re-run, so its hint names the re-send options, and with them ``a`` re-sends
the recorded request without each piece and confirms the planted document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from foreign_layouts import LAYOUTS
from ingest_support import record
from planted_support import ROOT
from textual.pilot import Pilot
from textual.widgets import Static
from tui_support import lens_on, settle, text_of

from footprint._errors import ConfigError
from lens.tui._state import Resend, resend_of
from lens.tui._why import WhyScreen

DESK = "tests/resend_providers.py:refund_desk"


@pytest.fixture
def ingested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The LangChain agent with the stale memo in its user message, received over OTLP;
    provider references resolve from the repository root, as a user types them there."""
    monkeypatch.chdir(ROOT)
    record(LAYOUTS["langchain user-context"], tmp_path / "store")
    return tmp_path / "store"


async def _why(pilot: Pilot[Any]) -> WhyScreen:
    await pilot.press("w")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, WhyScreen)
    return screen


async def test_given_an_ingested_run_without_a_provider_when_why_opens_then_the_hint_says_how(
        ingested: Path) -> None:
    async with lens_on(ingested) as pilot:
        screen = await _why(pilot)
        line = text_of(screen.query_one("#causal", Static))
        assert "mapped from a trace of openinference.instrumentation.langchain" in line
        assert "--provider FILE.py:FACTORY (or --base-url URL --model NAME)" in line
        assert "--agent" not in line and "examples/planted" not in line
        await pilot.press("a")
        await settle(pilot)
        assert screen.search is None and screen.report is None


async def test_given_an_ingested_run_and_a_provider_when_a_is_pressed_then_it_resends_and_names_the_document(  # noqa: E501
        ingested: Path) -> None:
    async with lens_on(ingested, resend=Resend(provider=DESK)) as pilot:
        screen = await _why(pilot)
        assert text_of(screen.query_one("#causal", Static)).startswith(
            "Only counterfactual re-sends can say \"caused\": press a to re-send the recorded "
            f"request without each piece (the causal search), re-send via {DESK}")
        await pilot.press("a")
        await settle(pilot, seconds=90)
        assert screen.search is not None and screen.search.state.name == "SUCCESS"
        headline = text_of(screen.query_one("#chain", Static))
        assert headline.startswith("CONFIRMED: removing document 'doc:memo-fin-2019-07' "
                                   "changed the answer of request llm#2"), headline
        assert f"computed with re-send via {DESK} · cached in why/" in text_of(
            screen.query_one("#causal", Static))
    async with lens_on(ingested, resend=Resend(provider=DESK)) as pilot:  # from the cache
        screen = await _why(pilot)
        assert screen.search is None and text_of(screen.query_one("#chain", Static)) == headline


@pytest.mark.parametrize(("options", "fix"), [
    ({"model": "m"}, "--model 'm' names the model to re-send to"),
    ({"provider": DESK, "base_url": "http://127.0.0.1:9/v1"}, "exactly one of --provider"),
    ({"base_url": "127.0.0.1:9"}, "is not an http(s) URL"),
    ({"provider": "refund_desk"}, "is not FILE.py:FACTORY or module:factory")])
def test_given_bad_resend_options_when_read_then_the_error_quotes_them(
        options: dict[str, str], fix: str) -> None:
    with pytest.raises(ConfigError, match=fix.replace("(", r"\(").replace(")", r"\)")):
        resend_of(options.get("provider"), options.get("base_url"), options.get("model"))
