"""Streamed tool calls assembled as each real server sends them (tests/stream_shapes.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from stream_shapes import SHAPES, call_chunks

from footprint.providers._openai import OpenAIChunks, parse_openai_response

_NAMES = st.text("abcdefghij_", min_size=1, max_size=12)
_ARGS = st.dictionaries(st.text("xyz", min_size=1, max_size=4),
                        st.integers() | st.text(max_size=8), max_size=3)


def _assembled(shape: str, calls: list[dict[str, Any]],
               usage: dict[str, int] | None) -> Any:
    chunks = OpenAIChunks()
    chunks.feed({"id": "c-1", "model": "m",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    for items in call_chunks(shape, calls):
        chunks.feed({"id": "c-1", "choices": [{"index": 0, "delta": {"tool_calls": items}}]})
    chunks.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    if usage is not None:
        chunks.feed({"choices": [], "usage": usage})
    return parse_openai_response(chunks.body())


@pytest.mark.parametrize("shape", SHAPES)
@given(wanted=st.lists(st.tuples(_NAMES, _ARGS), min_size=1, max_size=3))
def test_given_tool_calls_streamed_in_a_servers_shape_when_assembled_then_each_call_is_whole(
    shape: str, wanted: list[tuple[str, dict[str, Any]]],
) -> None:
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in enumerate(wanted)]
    got = _assembled(shape, calls, {"prompt_tokens": 3, "completion_tokens": 2})
    assert [(c.id, c.name, dict(c.arguments)) for c in got.tool_calls] == [
        (f"call_{i}", name, args) for i, (name, args) in enumerate(wanted)]
    assert got.stop_reason == "tool_use"
    assert (got.usage.input_tokens, got.usage.output_tokens) == (3, 2)


def test_given_llamacpp_repeating_the_name_in_every_chunk_when_assembled_then_it_is_said_once(
) -> None:
    calls = [{"id": "call_0", "type": "function",
              "function": {"name": "get_price", "arguments": json.dumps({"sku": "A-1234567"})}}]
    assert len(list(call_chunks("llamacpp", calls))) > 3  # the name came many times
    got = _assembled("llamacpp", calls, None)
    assert [c.name for c in got.tool_calls] == ["get_price"]


@pytest.mark.parametrize("usage", [None, {"total_tokens": 5}], ids=["absent", "no-counts"])
def test_given_a_stream_without_usage_when_assembled_then_tokens_are_unknown_not_zero(
    usage: dict[str, int] | None,
) -> None:
    calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    got = _assembled("openai", calls, usage)
    assert got.usage.input_tokens is None and got.usage.output_tokens is None
