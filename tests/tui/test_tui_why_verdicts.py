"""The lens shows the CLI's verdicts: each suspect's class (root, on the path, necessary, a
member of a confirmed set, wording, not confirmed, untested, broke, inconclusive) in the
words ``footprint why`` prints and one colour per class, and the causal path drawn; driven
by reports of real why runs of the planted examples, cached in their stores."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from planted_support import ROOT, record, ref
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import OptionList, Static
from tui_support import SIZE, lens_on, settle, text_of

from lens.explain._cache import cache_path, save_report
from lens.explain._report import WhyReport, headline, verdict_line
from lens.explain._why import why
from lens.tui import LensApp
from lens.tui._verdict import CLASSES, VerdictClass, verdict_class
from lens.tui._why import WhyScreen
from lens.tui._whyread import SEARCH_OPTIONS
from recorder import open_store


@dataclass(frozen=True, slots=True)
class Case:
    """A planted example explained with ``options``; the classes its report must hold."""

    name: str
    options: tuple[tuple[str, Any], ...]
    classes: frozenset[VerdictClass]
    keys: tuple[str, ...] = ()
    """What the snapshot presses first, to bring a class into view."""


def _exact(answer: str) -> object:
    """A judge for which any other text is another outcome: wording counts as a change."""
    return answer


CASES = {
    "path": Case("skill_wrong_tool", (), frozenset({"root", "mediator", "not-confirmed"})),
    "set": Case("mixed_pair", (), frozenset({"root", "necessary", "member", "not-confirmed"}),
                ("end",)),  # the set's members rank last
    "wording": Case("number_words", (("judge", _exact),),
                    frozenset({"root", "wording", "not-confirmed"})),
    "budget": Case("yearless_date", (("budget", 20),),  # confirmed as soon as isolated
                   frozenset({"root", "untested"})),
    "broke": Case("crash", (), frozenset({"root", "broke", "not-confirmed"})),
    "sampling": Case("sampling", (), frozenset({"inconclusive"})),
    "context": Case("user_gated_rule", (), frozenset({"root", "context", "not-confirmed"})),
}
_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def explained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, WhyReport]]:
    """Each case's example recorded and explained by ``why``, its report cached where the
    lens looks for the example's agent (at a fixed time: snapshots stay the same)."""
    done: dict[str, tuple[Path, WhyReport]] = {}
    for key, case in CASES.items():
        store = tmp_path_factory.mktemp(key) / "store"
        with contextlib.chdir(ROOT):
            record(case.name, store)
            with open_store(store) as opened:
                run_id = opened.resolve_run("last")
            report = why(str(store), run_id, agent=ref(case.name), **dict(case.options))
        save_report(cache_path(store, run_id, ref(case.name), SEARCH_OPTIONS), report,
                    agent=ref(case.name), options=SEARCH_OPTIONS, now=_AT)
        done[key] = (store, report)
    return done


def _copy(explained: dict[str, tuple[Path, WhyReport]], key: str, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> tuple[Path, WhyReport]:
    monkeypatch.chdir(ROOT)
    store, report = explained[key]
    return Path(shutil.copytree(store, tmp_path / "store")), report


async def _why(pilot: Pilot[Any]) -> WhyScreen:
    await pilot.press("w")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, WhyScreen) and screen.report is not None
    return screen


def _styles(prompt: Text, words: str) -> set[str]:
    """The styles of the spans that cover ``words`` in ``prompt``."""
    at = prompt.plain.index(words)
    return {str(s.style) for s in prompt.spans if s.start <= at and at + len(words) <= s.end}


@pytest.mark.parametrize("key", CASES)
async def test_given_a_cached_report_when_the_why_screen_lists_it_then_each_verdict_is_the_clis(
    explained: dict[str, tuple[Path, WhyReport]], key: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, report = _copy(explained, key, tmp_path, monkeypatch)
    assert {verdict_class(s, report) for s in report.suspects} - {"unsearched"} \
        == CASES[key].classes
    async with lens_on(store, agent=ref(CASES[key].name)) as pilot:
        listing = (await _why(pilot)).query_one("#pieces", OptionList)
        prompts = [listing.get_option_at_index(i).prompt for i in range(listing.option_count)]
    assert len(prompts) == len(report.suspects)
    for s, prompt in zip(report.suspects, prompts, strict=True):
        assert isinstance(prompt, Text)
        tag, style = CLASSES[verdict_class(s, report)]
        assert style in _styles(prompt, tag), (prompt.plain, tag)
        line = verdict_line(s, report)
        if line is None:  # not among the removals tried: the CLI prints no verdict either
            assert s.verdict is None and prompt.plain.endswith(f" {tag}")
            continue
        assert line[:100] in prompt.plain and style in _styles(prompt, line[:100]), line


@pytest.mark.parametrize("key", ["path", "set"])
async def test_given_a_confirmed_report_when_the_why_screen_opens_then_its_top_is_the_headline(
    explained: dict[str, tuple[Path, WhyReport]], key: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, report = _copy(explained, key, tmp_path, monkeypatch)
    async with lens_on(store, agent=ref(CASES[key].name)) as pilot:
        chain = (await _why(pilot)).query_one("#chain", Static)
        shown = chain.content
    assert isinstance(shown, Text) and text_of(chain) == "\n".join(headline(report))
    assert report.path and "path: " + " → ".join(report.path) in shown.plain
    assert CLASSES["root"][1] in _styles(shown, report.path[0])
    if key == "path":
        assert CLASSES["mediator"][1] in _styles(shown, report.path[1])
    else:
        assert report.necessary and CLASSES["necessary"][1] in _styles(shown, "necessary (")


@pytest.mark.parametrize("key", CASES)
def test_given_a_cached_report_when_the_why_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], explained: dict[str, tuple[Path, WhyReport]],
    key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, _ = _copy(explained, key, tmp_path, monkeypatch)

    async def shown(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press(*CASES[key].keys)
        await settle(pilot)

    app = LensApp(store, run="last", view="why", agent=ref(CASES[key].name))
    assert snap_compare(app, run_before=shown, terminal_size=SIZE)
