"""Roots are grouped by the recorded values their removals change: a conjunction shares one,
independent causes change values of their own."""

from __future__ import annotations

from lens.explain._path import joint_roots
from lens.explain._report import Suspect


def _root(name: str, *changes: str) -> Suspect:
    return Suspect(rank=0, kind="injection", id=name, ids=None, label=f"fact {name!r}",
                   flavor="fact", step_id="llm#1", score=0.0, chain=(), excerpt="",
                   verdict="confirmed", changes=changes)


def _ids(groups: list[list[Suspect]]) -> list[list[str | None]]:
    return [[s.id for s in g] for g in groups]


def test_given_two_roots_changing_one_value_to_two_new_values_then_they_are_one_conjunction(
) -> None:
    a, b = _root("a", "150 EUR → 200 EUR"), _root("b", "150 EUR → 180 EUR")
    assert _ids(joint_roots([a, b])) == [["a", "b"]]


def test_given_roots_changing_values_of_their_own_then_each_is_apart_in_root_order() -> None:
    a, b, c = _root("a", "210 EUR → 300 EUR"), _root("b", "9 days → 3 days"), _root(
        "c", "-9 days", "+express")
    assert _ids(joint_roots([a, b])) == [["a"], ["b"]]
    assert _ids(joint_roots([a, b, c])) == [["a"], ["b", "c"]]


def test_given_a_root_whose_change_is_not_named_then_it_stays_with_the_others() -> None:
    a, b, c = _root("a", "210 EUR → 300 EUR"), _root("b"), _root("c", "9 days → 3 days")
    assert _ids(joint_roots([a, b, c])) == [["a", "b", "c"]]


def test_given_a_confirmed_set_holding_a_confirmed_piece_when_ordered_then_the_piece_is_named_once(
) -> None:
    from dataclasses import replace

    from lens.explain._candidates import Candidate
    from lens.explain._path import causal_order

    a, b = _root("a", "1 pm → 11 am"), _root("b", "1 pm → 10 am")
    both = replace(a, kind="set", id=None, ids=("a", "b"), label="set: a + b")
    b = replace(b, verdict="not-confirmed")
    cands = [Candidate(kind="injection", id=i, label=f"fact {i!r}", flavor="fact",
                       step_id="llm#1", seq=n, chain=(), excerpt="", score=0.0,
                       reach=("llm#1",)) for n, i in enumerate("ab")]
    order = causal_order([both, a, b], cands, "llm#1")
    assert [s.id for s in order.roots] == ["a"], order.roots
    assert order.path == ("fact 'a'", "answer (llm#1)")
