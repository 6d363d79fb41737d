"""The cassette: recorded model responses and tool results served back, and the host seam."""

from __future__ import annotations

import pytest
from agent_support import make_agent, of
from hypothesis import assume, given
from hypothesis import strategies as st

from footprint import (
    ConfigError,
    FunctionModel,
    Intent,
    KeywordScorer,
    ProviderChoice,
    RunError,
    ScriptedModel,
    define_skill,
    skill_graph,
    tool,
)
from footprint.agent import ServedTool
from footprint.agent._compose import content_hash
from footprint.agent._wire import request_json
from footprint.events import ListSink, LLMEnd, LLMStart, ToolEnd
from footprint.providers import LLMRequest, Message, Reply, ToolCall, ToolSpec, call
from lens._examples.support_desk import make_agent as make_desk
from lens.playback._cassette import (
    ReplayDivergence,
    ReplayModel,
    ReplayTools,
    own_result,
    request_parts_diff,
)
from lens.playback._replay import replay


def _lookup(order_id: str) -> str:
    """Look an order up."""
    raise AssertionError("the real tool must not run when a source serves it")


class _Served:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def serve(self, c: ToolCall) -> ServedTool:
        self.calls.append(c)
        return ServedTool(text=f"served {c.arguments['order_id']}", status="success")


def _two_step(request: LLMRequest) -> Reply:
    if not any(m.role == "tool" for m in request.messages):
        return call("_lookup", order_id="A-1")
    return "done: " + request.messages[-1].content


def test_given_a_tool_source_when_the_model_calls_a_tool_then_the_source_answers_it() -> None:
    sink, source = ListSink(), _Served()
    agent = make_agent(FunctionModel(_two_step), sink, tools=[tool(_lookup)],
                       tool_source=source)
    assert agent.run_sync("order?").answer == "done: served A-1"
    (end,) = of(sink.events, ToolEnd)
    assert (end.result, end.status, end.error) == ("served A-1", "success", False)
    assert [c.name for c in source.calls] == ["_lookup"]


def test_given_a_model_source_when_the_agent_runs_then_it_answers_and_events_name_the_brain(
) -> None:
    def broken(request: LLMRequest) -> str:
        raise AssertionError("the brain's own provider must not be called")

    sink = ListSink()
    agent = make_agent(FunctionModel(broken, name="brain"), sink,
                       model_source=FunctionModel(lambda r: "from the source"))
    assert agent.run_sync("hi").answer == "from the source"
    assert {e.provider for e in of(sink.events, LLMStart)} == {"brain"}


def test_given_a_stepped_tool_when_recorded_then_its_step_note_is_kept_apart() -> None:
    sink = ListSink()
    make_desk(sink=sink).answer()
    refund = next(e for e in of(sink.events, ToolEnd) if e.tool_name == "issue_refund")
    assert refund.step_note is not None and refund.step_note.startswith(" Step 2 of 2 done.")
    assert refund.result == own_result(refund) + refund.step_note
    served = ReplayTools(sink.events).serve(  # type: ignore[arg-type]
        call("issue_refund", order_id="A-1047", amount=40))
    assert served.text == '{"order_id": "A-1047", "refunded": 40, "status": "issued"}'


def _request(system: str, *messages: str, tools: tuple[str, ...] = ()) -> LLMRequest:
    return LLMRequest(model="m", system=system,
                      messages=tuple(Message(role="user", content=m) for m in messages),
                      tools=tuple(ToolSpec(name=t, description=f"{t} tool") for t in tools))


def _recorded(*pairs: tuple[LLMRequest, str]) -> list[object]:
    events: list[object] = []
    for k, (req, answer) in enumerate(pairs, start=1):
        wire = request_json(req)
        events += [LLMStart(run_id="r", seq=2 * k, ts=0, step_id=f"llm#{k}", provider="p",
                            model="m", request_hash=content_hash(wire), request_ref=wire),
                   LLMEnd(run_id="r", seq=2 * k + 1, ts=0, step_id=f"llm#{k}", content=answer,
                          response_hash="h")]
    return events


async def test_given_the_same_request_twice_when_served_then_answers_come_in_recorded_order(
) -> None:
    req = _request("sys", "hello")
    model = ReplayModel(_recorded((req, "first"), (req, "second")))  # type: ignore[arg-type]
    assert (await model.complete(req)).content == "first"
    assert (await model.complete(req)).content == "second"
    with pytest.raises(ReplayDivergence, match=r"llm#3: the request .* is not in the recording"):
        await model.complete(req)


async def test_given_an_unknown_request_when_served_then_the_differing_parts_are_named() -> None:
    model = ReplayModel(_recorded((_request("policy A", "hi", tools=("t",)), "ok")))  # type: ignore[arg-type]
    with pytest.raises(ReplayDivergence, match="system prompt, tools"):
        await model.complete(_request("policy B", "hi", tools=("u",)))
    assert model.mismatch is not None
    step, parts = model.mismatch
    assert step == "llm#1"
    assert [p.part for p in parts] == ["system prompt", "tools"]
    assert parts[0].expected == "policy A" and parts[0].got == "policy B"
    assert parts[1].detail == "tool menu changed; removed ['t']; added ['u']"


def test_given_a_tool_call_the_recording_lacks_when_served_then_replay_diverges() -> None:
    with pytest.raises(ReplayDivergence, match=r"lookup\(\{\"id\":2\}\) has no recorded result"):
        ReplayTools([]).serve(call("lookup", id=2))


def test_given_an_unchanged_agent_when_its_run_is_replayed_then_no_decision_differs() -> None:
    sink = ListSink()
    make_desk(sink=sink).answer()
    report = replay(sink.events, make_desk())
    assert report.identical and report.compared == report.recorded > 100
    assert report.answer_got == report.answer_expected


_TEXT = st.text(min_size=0, max_size=40)


@given(_TEXT, st.lists(_TEXT, max_size=3), st.lists(st.sampled_from("abc"), unique=True))
def test_given_any_request_when_compared_with_itself_then_no_part_differs(
    system: str, messages: list[str], tools: list[str],
) -> None:
    wire = request_json(_request(system, *messages, tools=tuple(tools)))
    assert request_parts_diff(wire, wire) == ()


@given(_TEXT, _TEXT, _TEXT)
def test_given_two_system_prompts_when_they_differ_then_only_the_system_prompt_is_named(
    prefix: str, a: str, b: str,
) -> None:
    assume(a != b)
    parts = request_parts_diff(request_json(_request(prefix + a, "x")),
                               request_json(_request(prefix + b, "x")))
    assert [p.part for p in parts] == ["system prompt"]
    pairs = enumerate(zip(a, b, strict=False))
    same = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    at = len(prefix) + same
    assert parts[0].detail == (f"first differs at character {at} "
                               f"({len(prefix + a)} vs {len(prefix + b)} chars)")


@given(_TEXT, st.one_of(st.none(), _TEXT))
def test_given_any_result_and_step_note_when_split_then_the_own_result_comes_back(
    own: str, note: str | None,
) -> None:
    end = ToolEnd(run_id="r", seq=0, ts=0, tool_call_id="c", tool_name="t",
                  result=own + (note or ""), step_note=note)
    assert own_result(end) == own


async def test_given_a_fallback_when_a_request_misses_then_it_and_every_later_call_go_live(
) -> None:
    req = _request("sys", "hello")
    live = FunctionModel(lambda r: "live " + r.system)
    model = ReplayModel(_recorded((req, "first"), (_request("sys", "more"), "second")),  # type: ignore[arg-type]
                        fallback=live)
    assert (await model.complete(req)).content == "first"
    assert (await model.complete(_request("other", "x"))).content == "live other"
    assert (await model.complete(_request("sys", "more"))).content == "live sys"
    assert (model.served, model.called, model.live) == (1, 2, True)
    assert model.mismatch is not None and model.mismatch[0] == "llm#2"


def test_given_a_model_source_when_a_cascade_asks_its_decider_then_the_source_answers_it(
) -> None:
    graph = (skill_graph(define_skill("refund", "refund a payment", "Refund."),
                         define_skill("billing", "invoices", "Bill."))
             .entry("refund", match=Intent("refund money", ("money back",)))
             .entry("billing", match=Intent("invoice billing", ("my invoice",)))
             .classify(KeywordScorer()).build(check="off"))
    decider = ScriptedModel(["refund"], name="decider")
    source = FunctionModel(lambda r: "billing" if "Options:" in r.messages[0].content else "ok")
    agent = make_agent(ScriptedModel([], name="mock"), ListSink(), graph=graph,
                       decider=ProviderChoice(provider=decider, model="small"),
                       model_source=source)
    assert agent.run_sync("zzz qqq").cursor == "billing"
    assert decider.requests == []


@given(st.one_of(st.integers(), st.text(max_size=3), st.none()))
def test_given_a_non_bool_deterministic_when_a_tool_is_made_then_config_error(value: object,
                                                                               ) -> None:
    with pytest.raises(ConfigError, match=r"deterministic=.* is not a bool; pass True or False"):
        tool(_lookup, deterministic=value)  # type: ignore[arg-type]


def _fails_after_lookup(request: LLMRequest) -> Reply:
    if not any(m.role == "tool" for m in request.messages):
        return call("_order", order_id="A-1")
    raise ValueError("the model service is down")


def _order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}"


def test_given_a_run_that_failed_on_a_model_call_when_replayed_then_it_fails_the_same_way(
) -> None:
    sink = ListSink()
    agent = make_agent(FunctionModel(_fails_after_lookup, name="m"), sink, tools=[tool(_order)])
    with pytest.raises(RunError, match="the model service is down"):
        agent.run_sync("order?")
    report = replay(sink.events, make_agent(FunctionModel(_fails_after_lookup, name="m"),
                                            ListSink(), tools=[tool(_order)]))
    assert report.identical, report
    assert report.compared == report.recorded and report.answer_got is None
    changed = replay(sink.events, make_agent(FunctionModel(_fails_after_lookup, name="m"),
                                             ListSink(), tools=[tool(_order)],
                                             system_prompt="Be brief."))
    assert not changed.identical and changed.request is not None
