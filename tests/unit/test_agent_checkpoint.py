"""Checkpoints round-trip through JSON exactly (hypothesis over conversations)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from footprint.agent._checkpoint import Conversation, conversation_from, conversation_to
from footprint.providers import Message, ToolCall

_text = st.text(max_size=30)
_json_args = st.dictionaries(st.text(min_size=1, max_size=8),
                             st.one_of(st.integers(), st.text(max_size=8), st.booleans(),
                                       st.none()), max_size=3)
_calls = st.lists(st.builds(ToolCall, id=st.text(min_size=1, max_size=6),
                            name=st.text(min_size=1, max_size=10), arguments=_json_args),
                  max_size=2).map(tuple)
_messages = st.one_of(
    st.builds(Message, role=st.just("user"), content=_text,
              origin=st.sampled_from(["person", "engine#nudge", "injection#vip"])),
    st.builds(Message, role=st.just("assistant"), content=_text, tool_calls=_calls,
              origin=st.from_regex(r"llm#[1-9]", fullmatch=True)),
    st.builds(Message, role=st.just("tool"), content=_text, tool_call_id=_text,
              tool_name=_text, origin=st.from_regex(r"tool#c[0-9]", fullmatch=True)),
)


@given(history=st.lists(_messages, max_size=6), turns=st.integers(0, 50),
       cursor=st.one_of(st.none(), st.text(min_size=1, max_size=10)))
def test_given_any_conversation_when_checkpointed_through_json_then_it_reads_back_equal(
    history: list[Message], turns: int, cursor: str | None
) -> None:
    conv = Conversation(conversation_id="c-1", turns=turns, history=history, cursor=cursor)
    back = conversation_from(json.loads(json.dumps(conversation_to(conv))))
    assert back == conv
