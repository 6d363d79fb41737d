"""The history as triggers see it: a run's memo reuses the views of messages it has
seen, and gives exactly what a fresh view gives, whatever happened to the list."""

from __future__ import annotations

from footprint.agent._state import HistoryViews, history_view
from footprint.injection import define_fact
from footprint.providers import Message

BY_ID = {"fact": define_fact("fact", {"key": 1})}


def _history() -> list[Message]:
    return [
        Message(role="system", content="You are a test."),
        Message(role="user", content="go", origin="person"),
        Message(role="user", content="a fact", origin="injection#fact"),
        Message(role="assistant", content="ok", origin="llm#1"),
        Message(role="user", content="keep going", origin="engine#2"),
    ]


def test_given_a_history_that_grows_when_viewed_with_a_memo_then_each_view_matches_a_fresh_one(
) -> None:
    history, memo = _history()[:2], HistoryViews()
    first = history_view(history, BY_ID, memo)
    history.extend(_history()[2:])
    second = history_view(history, BY_ID, memo)
    assert first == history_view(history[:2], BY_ID)
    assert second == history_view(history, BY_ID)
    assert second[0] is first[0]  # the message seen before kept its view
    assert [v.library_written for v in second] == [False, False, False, True]
    assert second[1].injected_by is not None and second[1].injected_by.flavor == "fact"


def test_given_a_history_changed_in_place_when_viewed_with_a_memo_then_it_starts_afresh(
) -> None:
    history, memo = _history(), HistoryViews()
    history_view(history, BY_ID, memo)
    history[1] = Message(role="user", content="another question", origin="person")
    assert history_view(history, BY_ID, memo) == history_view(history, BY_ID)
    shorter = history[:3]
    assert history_view(shorter, BY_ID, memo) == history_view(shorter, BY_ID)
    assert history_view([], BY_ID, memo) == ()
