"""A recorded request taken apart into pieces (``lens.explain._request``): round trips,
removals that keep the request valid, identical content as one piece."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from footprint.agent._wire import request_json
from footprint.providers import LLMRequest, Message, ToolCall, ToolSpec
from lens.explain._request import Part, pieces_of, request_of

_TEXT = st.text(alphabet="abcdefgh XYZ.,:", min_size=1, max_size=20).map(str.strip).filter(bool)


@st.composite
def _exchange(draw: st.DrawFn, n: int) -> list[Message]:
    """An assistant turn that calls 1-2 tools, and their results."""
    calls = [ToolCall(id=f"call_{n}_{i}", name=draw(st.sampled_from(["price", "stock"])),
                      arguments={"q": draw(_TEXT)})
             for i in range(draw(st.integers(1, 2)))]
    said = draw(st.one_of(st.just(""), _TEXT))
    return [Message(role="assistant", content=said, tool_calls=tuple(calls)),
            *(Message(role="tool", content=draw(_TEXT), tool_call_id=c.id, tool_name=c.name)
              for c in calls)]


@st.composite
def requests(draw: st.DrawFn) -> tuple[LLMRequest, list[Part], str]:
    parts = [Part(id=f"p{i}", text=t) for i, t in enumerate(draw(st.lists(_TEXT, max_size=4)))]
    history: list[Message] = []
    for n in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            history += draw(_exchange(n))
        else:
            history.append(Message(role=draw(st.sampled_from(["user", "assistant"])),
                                   content=draw(_TEXT)))
    question = draw(_TEXT)
    tools = tuple(ToolSpec(name=n, description=draw(_TEXT), input_schema={"type": "object"})
                  for n in draw(st.lists(st.sampled_from(["price", "stock", "ship"]),
                                         unique=True, max_size=3)))
    req = LLMRequest(model="m", system="\n\n".join(p.text for p in parts),
                     messages=(*history, Message(role="user", content=question)), tools=tools,
                     temperature=draw(st.one_of(st.none(), st.just(0.5))))
    return req, parts, question


@settings(max_examples=60, deadline=None)
@given(requests())
def test_given_a_request_when_written_and_read_back_then_it_is_the_same_request(
        got: tuple[LLMRequest, list[Part], str]) -> None:
    req, parts, question = got
    assert request_of(request_json(req), "llm#1") == req
    rec, _ = pieces_of(req, parts, question, "llm#1")
    assert rec.without(()) == req


@settings(max_examples=80, deadline=None)
@given(requests(), st.data())
def test_given_any_pieces_removed_when_the_request_is_rebuilt_then_it_stays_valid(
        got: tuple[LLMRequest, list[Part], str], data: st.DataObject) -> None:
    req, parts, question = got
    rec, _ = pieces_of(req, parts, question, "llm#1")
    gone = data.draw(st.lists(st.sampled_from([p.id for p in rec.pieces]), unique=True)
                     if rec.pieces else st.just([]))
    out = rec.without(gone)
    calls = [c.id for m in out.messages for c in m.tool_calls]
    results = [m.tool_call_id for m in out.messages if m.role == "tool"]
    assert sorted(calls) == sorted(r for r in results if r is not None)
    assert all(m.content or m.tool_calls for m in out.messages if m.role == "assistant")
    assert out.messages[-1] == Message(role="user", content=question)
    assert len(out.messages) <= len(req.messages) and len(out.system) <= len(req.system)


def test_given_a_tool_call_when_its_exchange_is_removed_then_its_result_goes_with_it() -> None:
    call = ToolCall(id="call_1", name="price", arguments={"sku": "C40"})
    req = LLMRequest(model="m", system="Base.", messages=(
        Message(role="user", content="price?"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="189", tool_call_id="call_1", tool_name="price"),
        Message(role="user", content="and now?")))
    rec, _ = pieces_of(req, [], "and now?", "llm#2")
    piece = next(p for p in rec.pieces if p.kind == "exchange")
    assert piece.label == "tool call #call_1 (price) + its result"
    assert rec.without([piece.id]).messages == (req.messages[0], req.messages[3])


def test_given_identical_content_twice_when_taken_apart_then_it_is_one_piece() -> None:
    parts = [Part(id="memo", text="C40 now 189."), Part(id="list", text="C40 149 EUR."),
             Part(id="memo-again", text="C40 now 189.")]
    req = LLMRequest(model="m", system="\n\n".join(p.text for p in parts),
                     messages=(Message(role="user", content="price?"),))
    rec, flags = pieces_of(req, parts, "price?", "llm#1")
    memo = [p for p in rec.pieces if p.text == "C40 now 189."]
    assert not flags and len(memo) == 1 and memo[0].at == ("0", "2")
    assert rec.without([memo[0].id]).system == "C40 149 EUR."


def test_given_parts_not_on_blank_lines_when_taken_apart_then_each_is_a_piece_and_rebuilds(
        ) -> None:
    req = LLMRequest(model="m", system="Base. Rule one.",
                     messages=(Message(role="user", content="q"),))
    rec, flags = pieces_of(req, [Part(id="rule", text="Rule one.")], "q", "llm#1")
    assert [p.id for p in rec.pieces if p.kind == "system"] == ["system part #0", "rule"]
    assert not flags
    assert rec.without(()) == req
    assert rec.without(["rule"]).system == "Base."


def test_given_wrapped_cited_documents_when_one_is_removed_then_the_rest_is_byte_for_byte(
        ) -> None:
    system = ("You are the desk.\n<documents>\n<doc id=\"memo\">Refunds: 60 days.</doc>\n"
              "<doc id=\"ship\">Shipping is free.</doc>\n</documents>\nCite as [1].")
    landed = [Part(id="doc:memo", text='<doc id="memo">Refunds: 60 days.</doc>', flavor="rag"),
              Part(id="doc:ship", text='<doc id="ship">Shipping is free.</doc>', flavor="rag")]
    req = LLMRequest(model="m", system=system, messages=(Message(role="user", content="q"),))
    rec, flags = pieces_of(req, landed, "q", "llm#1")
    assert not flags and rec.without(()) == req
    assert [p.id for p in rec.pieces if p.kind == "document"] == ["doc:memo", "doc:ship"]
    assert rec.without(["doc:memo"]).system == system.replace(
        '\n<doc id="memo">Refunds: 60 days.</doc>', "")


def test_given_a_document_inside_the_question_when_removed_then_the_question_stays() -> None:
    question = "Context:\nRefunds: 60 days.\n\nShipping is free.\n\nQuestion: refund?"
    docs = [Part(id="doc:memo", text="Refunds: 60 days.", flavor="rag"),
            Part(id="doc:ship", text="Shipping is free.", flavor="rag")]
    req = LLMRequest(model="m", system="Desk.",
                     messages=(Message(role="user", content=question),))
    rec, flags = pieces_of(req, [], question, "llm#1", docs)
    assert not flags and rec.question == 0 and rec.without(()) == req
    assert [p.id for p in rec.pieces if p.kind == "document"] == ["doc:memo", "doc:ship"]
    assert rec.without(["doc:memo"]).messages[0].content == \
        "Context:\nShipping is free.\n\nQuestion: refund?"


def test_given_a_recorded_document_not_in_the_request_when_taken_apart_then_it_is_flagged(
        ) -> None:
    req = LLMRequest(model="m", system="Desk.", messages=(Message(role="user", content="q"),))
    _, flags = pieces_of(req, [], "q", "llm#1", [Part(id="doc:x", text="Gone.", flavor="rag")])
    assert flags == ["unsplit: document 'doc:x' (5 chars) was recorded in llm#1 but its text "
                     "is not in the recorded request, so it is not tested"]


def test_given_a_long_question_with_nothing_marked_when_taken_apart_then_it_is_flagged(
        ) -> None:
    question = "Some notes. " * 100 + "Question: refund?"
    req = LLMRequest(model="m", system="Desk.",
                     messages=(Message(role="user", content=question),))
    _, flags = pieces_of(req, [], question, "llm#1")
    assert flags == [f"unsplit: the question (message #0, {len(question):,} chars besides its "
                     "marked documents) is never removed, so whatever else it holds is not "
                     "tested"]


def test_given_documents_inside_an_instruction_when_taken_apart_then_each_is_its_own_piece(
        ) -> None:
    system = "You are the desk.\n\nRefunds: 60 days.\n\nShipping is free.\n\nBe terse."
    landed = [Part(id="system:abc", text=system, flavor="base"),
              Part(id="doc:memo", text="Refunds: 60 days.", flavor="rag"),
              Part(id="doc:ship", text="Shipping is free.", flavor="rag")]
    req = LLMRequest(model="m", system=system, messages=(Message(role="user", content="q"),))
    rec, flags = pieces_of(req, landed, "q", "llm#1")
    assert not flags
    assert [(p.id, p.kind, p.text) for p in rec.pieces if p.kind in ("system", "document")] == [
        ("system:abc", "system", "You are the desk."),
        ("doc:memo", "document", "Refunds: 60 days."),
        ("doc:ship", "document", "Shipping is free."),
        ("system:abc part 2", "system", "Be terse.")]
    assert rec.without(()) == req
    assert rec.without(["doc:memo"]).system == "You are the desk.\n\nShipping is free.\n\n" \
                                               "Be terse."
