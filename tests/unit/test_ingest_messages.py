"""The GenAI dialect reads a message of one text part the short way: the same message its
general walk over the parts makes, whatever the message."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from recorder.ingest._genai import _split, messages_of

_TEXT = st.one_of(st.text(max_size=12), st.just("x [truncated]"), st.none(), st.integers())
_PART = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "content": _TEXT}),
    st.fixed_dictionaries({"type": st.just("text"), "content": _TEXT,
                           "truncated": st.booleans()}),
    st.fixed_dictionaries({"type": st.just("text")}),
    st.fixed_dictionaries({"type": st.just("tool_call"), "id": st.text(max_size=3),
                           "name": st.text(max_size=3)}),
    st.fixed_dictionaries({"type": st.just("tool_call_response"), "id": st.text(max_size=3),
                           "response": _TEXT}),
    st.text(max_size=5))
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "model", "tool", "system", "odd", ""])},
    optional={"parts": st.lists(_PART, max_size=3)})


@given(raw=st.lists(_MESSAGE, max_size=4))
def test_given_any_messages_when_read_then_each_is_what_the_general_walk_makes(
        raw: list[dict[str, Any]]) -> None:
    notes: list[str] = []
    expected = [m for r in raw for m in _split(str(r.get("role") or "user"),
                                                r.get("parts") or [], notes)]
    got_notes: list[str] = []
    assert messages_of(raw, got_notes) == expected
    assert got_notes == notes
