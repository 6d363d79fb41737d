"""The answer's chain of custody: every hop a recorded event, the ranking only correlational."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from footprint.events import ListSink
from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.explain._custody import answer_custody, overlap


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
