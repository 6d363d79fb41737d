"""The lens shows a sentence-level claim as the CLI words it: the headline names the line of
the piece in the root's colour, and the report below shows the piece around that line with
the line highlighted; driven by a real why run of a planted 40-line table, cached in its
store."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from planted_support import ROOT
from rich.text import Text
from sentence_cases import cases, make_table_agent
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Static
from tui_support import SIZE, lens_on, settle

from footprint import SeededIds
from lens.explain._cache import cache_path, save_report
from lens.explain._report import WhyReport, sentence_line
from lens.explain._why import why
from lens.tui import LensApp
from lens.tui._verdict import CLASSES
from lens.tui._why import WhyScreen
from lens.tui._whyread import SEARCH_OPTIONS
from lens.tui._whysentence import SPAN_STYLE, report_lines
from recorder import ParquetSink, Recorder, open_store

REF = "tests/sentence_cases.py:make_table_agent"
CASE = next(c for c in cases() if c.name == "table_40_lines")
_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def explained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, WhyReport]:
    store = tmp_path_factory.mktemp("table") / "store"
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        make_table_agent(sink=recorder).variant(ids=SeededIds(7)).run_sync(CASE.question)
    finally:
        recorder.close()
    with contextlib.chdir(ROOT), open_store(store) as opened:
        run_id = opened.resolve_run("last")
        report = why(str(store), run_id, agent=REF)
    save_report(cache_path(store, run_id, REF, SEARCH_OPTIONS), report, agent=REF,
                options=SEARCH_OPTIONS, now=_AT)
    return store, report


def _copy(explained: tuple[Path, WhyReport], tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> tuple[Path, WhyReport]:
    monkeypatch.chdir(ROOT)
    store, report = explained
    return Path(shutil.copytree(store, tmp_path / "store")), report


def _styles(text: Text, words: str, after: str = "") -> set[str]:
    """The styles of the spans covering ``words`` where ``after + words`` first occurs."""
    at = text.plain.index(after + words) + len(after)
    return {str(s.style) for s in text.spans if s.start <= at and at + len(words) <= s.end}


async def test_given_a_sentence_claim_when_the_why_screen_shows_it_then_the_line_is_highlighted(
    explained: tuple[Path, WhyReport], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, report = _copy(explained, tmp_path, monkeypatch)
    (claim,) = report.sentences
    assert claim.kind == "sentence" and [s.text for s in claim.spans] == list(CASE.planted)
    async with lens_on(store, agent=REF) as pilot:
        await pilot.press("w")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, WhyScreen) and screen.report is not None
        top = screen.query_one("#chain", Static).content
        body = screen.query_one("#piece", Static).content
    assert isinstance(top, Text) and isinstance(body, Text)
    line = sentence_line(claim)
    assert line in top.plain and CLASSES["root"][1] in _styles(top, line)
    row = CASE.planted[0]
    assert SPAN_STYLE in _styles(body, row, after="│ ")
    others = [r for r in claim.text.splitlines() if r != row and f"│ {r}" in body.plain]
    assert others and all(SPAN_STYLE not in _styles(body, r, after="│ ") for r in others)


def test_given_a_sentence_claim_when_the_why_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], explained: tuple[Path, WhyReport], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, _ = _copy(explained, tmp_path, monkeypatch)

    async def shown(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, WhyScreen) and screen.report is not None
        lines = [t.plain for t in report_lines(screen.report)]
        block = next(i for i, line in enumerate(lines) if line.startswith("      sentence"))
        screen.query_one("#piece-box", VerticalScroll).scroll_to(y=block - 4, animate=False)
        await settle(pilot)

    app = LensApp(store, run="last", view="why", agent=REF)
    assert snap_compare(app, run_before=shown, terminal_size=SIZE)
