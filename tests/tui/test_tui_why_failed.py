"""A failed run's why screen explains from the failing model call: the call that raised (an
``llm.start`` with no ``llm.end``), its error, and its prompt's custody as for an answer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from failed_runs import ERROR_MESSAGE, record_failed
from test_tui_snapshots import keys
from tui_support import SIZE, lens_on, text_of

from footprint.events import Event, LLMStart, RunFailed
from lens._examples.support_desk import PLANTED_FACT
from lens.explain._custody import answer_custody
from lens.tui import LensApp
from lens.tui._why import WhyScreen
from recorder import ParquetSink, Recorder

TIMEOUT = ("provider 'support-desk' raised TimeoutError: no reply within 30 s while the "
           "refund window policy memo was in the prompt")
"""The desk's failing call's error (its words overlap the planted refund-window fact)."""


def _desk_failing_last_call(events: list[Event]) -> tuple[list[Event], LLMStart]:
    """The support desk's run (``events``) cut after its last ``llm.start``, then a
    ``run.error``: the answering call raised. The events, and that call."""
    start = [e for e in events if isinstance(e, LLMStart)][-1]
    kept = [e for e in events if e.seq <= start.seq]
    error = RunFailed(run_id=start.run_id, seq=start.seq + 1, ts=start.ts + 1,
                      turn=start.turn, iteration=start.iteration,
                      step_id=f"engine#{start.iteration}", error_type="RunError",
                      message=TIMEOUT, stage="run")
    return [*kept, error], start


@pytest.fixture(scope="module")
def failed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run whose second model call raised (``failed_runs``)."""
    path = tmp_path_factory.mktemp("failed-why") / "store"
    record_failed(path)
    return path


def _stored(path: Path, events: list[Event]) -> Path:
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        for e in events:
            recorder.emit(e)
    finally:
        recorder.close()
    return path


@pytest.fixture(scope="module")
def desk_failed(tmp_path_factory: pytest.TempPathFactory,
                desk_events: list[Event]) -> tuple[Path, LLMStart]:
    """The support desk's run whose answering call raised, in a store: path, that call."""
    events, start = _desk_failing_last_call(desk_events)
    return _stored(tmp_path_factory.mktemp("desk-failed") / "store", events), start


def _why(app: object) -> WhyScreen:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, WhyScreen)
    return screen


async def test_given_a_run_whose_call_raised_when_why_opens_then_it_explains_from_that_call(
    failed_store: Path,
) -> None:
    async with lens_on(failed_store, view="why") as pilot:
        screen = _why(pilot.app)
        chain = " ".join(text_of(screen.query_one("#chain")).split())
        custody = screen.custody
    assert chain.startswith("RUN FAILED RunError at stage run: provider 'openai' raised "
                            "BackendDown: ")
    assert " ".join(ERROR_MESSAGE.split()) in chain  # the error, whole
    assert ("← the model call that raised: llm#2 · openai/gpt-4o-mini · iteration 2 "
            "(llm.start seq 20, no llm.end)") in chain
    assert ("← its prompt held 0 pieces and read 1 tool result (tool lookup_order #call_1), "
            "ranked by word overlap with the error — CORRELATIONAL") in chain
    assert "no model call" not in chain and "ANSWER" not in chain
    assert custody is not None and custody.call.step_id == "llm#2"
    assert custody.error is not None and ERROR_MESSAGE in custody.error
    assert [t.end.result for t in custody.tools] == ["order A-17: shipped"]


async def test_given_the_answering_call_raised_when_why_opens_then_its_pieces_are_walked(
    desk_failed: tuple[Path, LLMStart], desk_events: list[Event],
) -> None:
    path, start = desk_failed
    async with lens_on(path, view="why") as pilot:
        screen = _why(pilot.app)
        custody = screen.custody
        listed = screen.query_one("#pieces").option_count  # type: ignore[attr-defined]
        detail = text_of(screen.query_one("#piece"))
    answered = answer_custody(desk_events)
    assert custody is not None and answered is not None
    assert custody.call.step_id == start.step_id and custody.answer == ""
    assert custody.error == f"RunError: {TIMEOUT}"
    assert {p.landed.seq for p in custody.pieces} == {p.landed.seq for p in answered.pieces}
    assert listed == len(custody.pieces) > 0
    assert custody.pieces[0].landed.injection_id == PLANTED_FACT  # overlaps the error most
    assert detail.startswith(f"fact {PLANTED_FACT!r}")
    for piece in custody.pieces:  # every hop a recorded event before the call
        assert piece.landed.seq < custody.call.seq
        if piece.landed.admitted_via != "baseline":
            assert piece.allowed is not None and piece.allowed.seq < piece.landed.seq


async def test_given_a_run_cut_in_its_model_call_when_why_opens_then_the_open_call_is_walked(
    tmp_path: Path, desk_events: list[Event],
) -> None:
    events, start = _desk_failing_last_call(desk_events)
    path = _stored(tmp_path / "store", events[:-1])  # no run.error: stopped inside the call
    async with lens_on(path, view="why") as pilot:
        screen = _why(pilot.app)
        chain = " ".join(text_of(screen.query_one("#chain")).split())
        custody = screen.custody
    assert chain.startswith("RUN UNFINISHED")
    assert f"the model call that has not returned: {start.step_id}" in chain
    assert custody is not None and custody.call.step_id == start.step_id
    assert custody.error is not None and custody.error.startswith("no llm.end")


def test_given_a_run_whose_call_raised_when_the_why_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], failed_store: Path,
) -> None:
    assert snap_compare(LensApp(failed_store, run="last", view="why"), run_before=keys(),
                        terminal_size=SIZE)


def test_given_the_answering_call_raised_when_the_why_screen_shows_then_it_matches(
    snap_compare: Callable[..., bool], desk_failed: tuple[Path, LLMStart],
) -> None:
    assert snap_compare(LensApp(desk_failed[0], run="last", view="why"), run_before=keys(),
                        terminal_size=SIZE)


async def test_given_an_error_naming_a_model_call_when_why_opens_then_that_call_is_walked(
    tmp_path: Path, desk_events: list[Event],
) -> None:
    _, start = _desk_failing_last_call(desk_events)
    replied = [e for e in desk_events if e.seq <= start.seq + 1]  # its llm.end kept
    assert replied[-1].type == "llm.end"
    error = RunFailed(run_id=start.run_id, seq=start.seq + 2, ts=start.ts + 2, turn=start.turn,
                      iteration=start.iteration, step_id=start.step_id,  # as a trace names it
                      error_type="ContentFilterError", message="the reply was blocked",
                      stage="llm")
    path = _stored(tmp_path / "store", [*replied, error])
    async with lens_on(path, view="why") as pilot:
        screen = _why(pilot.app)
        chain = " ".join(text_of(screen.query_one("#chain")).split())
        custody = screen.custody
    assert (f"← the model call that raised: {start.step_id} · support-desk/desk-senior · "
            f"iteration {start.iteration} (llm.start seq {start.seq})") in chain
    assert "no llm.end" not in chain
    assert custody is not None and custody.call.step_id == start.step_id
    assert custody.error == "ContentFilterError: the reply was blocked"
