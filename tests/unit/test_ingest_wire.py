"""The mapper's request JSON (``llm.start.request_ref``) spelled by ``orjson`` is the text
footprint's own ``request_json`` writes, byte for byte, whatever the request holds."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.ingest import run_id_for
from recorder.ingest._pieces import wire_of, wire_reference
from recorder.ingest._request import Call, ChatRequest, Msg, ToolDef

_text = st.text(max_size=12)
_scalar = st.one_of(st.none(), st.booleans(), _text, st.floats(),
                    st.integers(-(1 << 70), 1 << 70))
_json = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(st.one_of(_text, st.integers(-5, 5)), inner, max_size=3)), max_leaves=8)
_args = st.dictionaries(_text, _json, max_size=3)
_call = st.builds(Call, id=_text, name=_text, arguments=_args)
_msg = st.builds(Msg, role=st.sampled_from(["user", "assistant", "tool"]), content=_text,
                 tool_calls=st.lists(_call, max_size=2).map(tuple),
                 tool_call_id=st.one_of(st.none(), _text),
                 tool_name=st.one_of(st.none(), _text, st.integers()))
_tool = st.builds(ToolDef, name=_text, description=_text, parameters=_args)
_request = st.builds(
    ChatRequest, dialect=st.just("otel-genai"), model=_text,
    system=st.lists(_text, max_size=3).map(tuple), messages=st.lists(_msg, max_size=4).map(tuple),
    tools=st.lists(_tool, max_size=2).map(tuple),
    temperature=st.one_of(st.none(), st.floats()),
    max_tokens=st.one_of(st.none(), st.integers(0, 1 << 70)))


@settings(max_examples=400)
@given(_request)
def test_given_any_request_when_spelled_then_the_text_is_the_reference_request_json(
        req: ChatRequest) -> None:
    assert wire_of(req) == wire_reference(req)


def test_given_floats_json_spells_otherwise_when_spelled_then_the_reference_text_is_kept() -> None:
    for value in (1e-05, 2.5e-07, float("nan"), float("inf"), 1e16, 0.1):
        req = ChatRequest(dialect="otel-genai", temperature=value,
                          tools=(ToolDef(name="t", parameters={"x": value}),))
        assert wire_of(req) == wire_reference(req)


@given(st.text(max_size=40), st.integers(-(1 << 80), 1 << 80))
def test_given_any_trace_when_its_run_id_is_made_then_it_is_spelled_as_uuid_spells_it(
        trace_id: str, start_ns: int) -> None:
    run_id = run_id_for(trace_id, start_ns)
    assert str(uuid.UUID(run_id)) == run_id
    assert uuid.UUID(run_id).version == 7
