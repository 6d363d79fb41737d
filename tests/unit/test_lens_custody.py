"""The answer's chain of custody: every hop a recorded event, the ranking only correlational."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.events import Event, ListSink, LLMStart
from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.explain._custody import answer_custody, failing_custody, overlap
from lens.explain._past import causal_past


def _recorded(**kw: object) -> ListSink:
    sink = ListSink()
    make_agent(sink=sink, **kw).answer()  # type: ignore[arg-type]
    return sink


def test_given_the_support_desk_run_when_custody_is_walked_then_every_hop_is_a_prior_event(
) -> None:
    events = _recorded().events
    custody = answer_custody(events)  # type: ignore[arg-type]
    assert custody is not None and custody.answer.startswith("APPROVED")
    assert custody.pieces, "the answering prompt had pieces"
    for piece in custody.pieces:
        assert piece.landed.seq < custody.call.seq
        assert piece.landed.iteration == custody.call.iteration
        if piece.landed.admitted_via != "baseline":
            assert piece.allowed is not None and piece.allowed.seq < piece.landed.seq
        if piece.landed.injection_id and piece.landed.source != "base":
            assert piece.born is not None
            assert piece.born.injection_id == piece.landed.injection_id


def test_given_the_planted_fact_when_pieces_are_ranked_then_it_resembles_the_answer_most() -> None:
    custody = answer_custody(_recorded().events)  # type: ignore[arg-type]
    assert custody is not None
    assert custody.pieces[0].landed.injection_id == PLANTED_FACT
    scores = [p.score for p in custody.pieces]
    assert scores == sorted(scores, reverse=True)


def test_given_the_fact_removed_when_custody_is_walked_then_it_is_not_in_the_prompt() -> None:
    custody = answer_custody(_recorded(without=(PLANTED_FACT,)).events)  # type: ignore[arg-type]
    assert custody is not None and custody.answer.startswith("DECLINED")
    assert all(p.landed.injection_id != PLANTED_FACT for p in custody.pieces)


def test_given_no_model_call_when_custody_is_walked_then_there_is_none() -> None:
    assert answer_custody([]) is None


@given(st.text(), st.text())
def test_given_any_two_texts_when_overlap_is_measured_then_it_is_symmetric_and_bounded(
    a: str, b: str
) -> None:
    assert overlap(a, b) == overlap(b, a)
    assert 0.0 <= overlap(a, b) <= 1.0 + 1e-9


def test_given_the_same_words_when_overlap_is_measured_then_it_is_one() -> None:
    assert overlap("refund window 60 days", "60 days refund window") == 1.0


def _cut_in_last_call() -> tuple[list[Event], LLMStart]:
    """The desk run up to its answering call's ``llm.start`` (the call never replied)."""
    events: list[Event] = list(_recorded().events)  # type: ignore[arg-type]
    start = [e for e in events if isinstance(e, LLMStart)][-1]
    return [e for e in events if e.seq <= start.seq], start


def test_given_a_call_that_never_replied_when_its_custody_is_walked_then_it_matches_the_answers(
) -> None:
    events, start = _cut_in_last_call()
    answered = answer_custody(_recorded().events)  # type: ignore[arg-type]
    failed = failing_custody(events, start.step_id, "TimeoutError: the refund window memo")
    assert failed is not None and answered is not None
    assert failed.call.step_id == answered.call.step_id and failed.answer == ""
    assert failed.error == "TimeoutError: the refund window memo"
    assert [p.landed.seq for p in sorted(failed.pieces, key=lambda p: p.landed.seq)] == [
        p.landed.seq for p in sorted(answered.pieces, key=lambda p: p.landed.seq)]
    assert [t.end.seq for t in sorted(failed.tools, key=lambda t: t.end.seq)] == [
        t.end.seq for t in sorted(answered.tools, key=lambda t: t.end.seq)]
    assert failed.pieces[0].landed.injection_id == PLANTED_FACT  # the error's words
    assert failed.pieces[0].score == overlap(
        failed.pieces[0].landed.raw_content or "", "TimeoutError: the refund window memo")


def test_given_a_step_with_no_model_call_when_failing_custody_is_walked_then_there_is_none(
) -> None:
    events, _ = _cut_in_last_call()
    assert failing_custody(events, "llm#99", "boom") is None
    assert failing_custody([], "llm#1", "boom") is None


def test_given_a_run_whose_only_call_failed_when_searched_then_the_refusal_names_that_call(
) -> None:
    events, start = _cut_in_last_call()
    only = [e for e in events if e.type not in ("llm.end",)]
    with pytest.raises(ConfigError, match=f"model call {start.step_id} failed before it "
                                          "replied") as caught:
        causal_past(only)
    assert "no model call" not in str(caught.value)
    with pytest.raises(ConfigError, match="the run has no model call"):
        causal_past([e for e in only if e.type != "llm.start"])
