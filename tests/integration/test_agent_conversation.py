"""Conversations across runs, limits, failures, and replay determinism of the event stream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_support import evaluated, make_agent, of, one

from footprint._errors import ConfigError, RunError
from footprint.agent import Agent, SeededIds, StepClock, tool
from footprint.events import (
    ListSink,
    LLMStart,
    RouteDecided,
    RunEnd,
    RunFailed,
    RunStart,
    TurnRouted,
    to_record,
)
from footprint.graph import Keywords, SkillGraph, skill_graph
from footprint.injection import define_skill, define_steering
from footprint.providers import FunctionModel, LLMRequest, Reply, ScriptedModel, call


def lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order_id": order_id, "risk": "low"}


def _graph() -> SkillGraph:
    triage = define_skill("triage", "sort requests", "You sort requests.")
    billing = define_skill("billing", "billing", "You handle billing.", tools=[tool(lookup)])
    refund = define_skill("refund", "refunds", "You refund.")
    return (skill_graph(triage, billing, refund)
            .entry(billing, match=Keywords(("invoice",))).entry(triage)
            .route(triage, billing, on_tool_return="lookup")
            .route(billing, refund, on_tool_return="lookup", guard={"risk": {"eq": "low"}})
            .build(check="off"))


def _echo(request: LLMRequest) -> Reply:
    """Answers with how many person messages it has seen so far."""
    said = [m.content for m in request.messages if m.role == "user"]
    return f"seen {len(said)}: {' | '.join(said)}"


# ── follow-ups and checkpoints ──────────────────────────────────────────────


def test_given_a_run_when_followed_up_then_the_next_turn_sees_the_history() -> None:
    sink = ListSink()
    agent = make_agent(FunctionModel(_echo), sink)
    first = agent.run_sync("hello")
    second = agent.follow_up_sync("and again")
    assert (first.answer, first.turn) == ("seen 1: hello", 0)
    assert (second.answer, second.turn) == ("seen 2: hello | and again", 1)
    starts = of(sink.events, RunStart)
    assert [s.turn for s in starts] == [0, 1]
    assert starts[0].conversation_id == starts[1].conversation_id
    assert starts[0].run_id != starts[1].run_id


def test_given_no_earlier_run_when_following_up_or_checkpointing_then_run_error() -> None:
    agent = make_agent(FunctionModel(_echo), ListSink())
    with pytest.raises(RunError, match="call run"):
        agent.follow_up_sync("hi")
    with pytest.raises(RunError, match="nothing to save"):
        agent.checkpoint()


def test_given_a_checkpoint_through_json_when_a_new_agent_continues_then_the_history_carries(
) -> None:
    first = make_agent(FunctionModel(_echo), ListSink())
    first.run_sync("my order is A1")
    saved = json.loads(json.dumps(first.checkpoint()))
    sink = ListSink()
    model = FunctionModel(_echo)
    result = make_agent(model, sink).run_sync("where is it?", continue_from=saved)
    assert result.answer == "seen 2: my order is A1 | where is it?"
    assert result.turn == 1
    assert [m.role for m in model.requests[0].messages] == ["user", "assistant", "user"]
    assert one(sink.events, RunStart).conversation_id == saved["conversation_id"]


def test_given_continuity_when_the_next_turn_starts_then_the_cursor_carries() -> None:
    sink = ListSink()
    model = ScriptedModel([call("lookup", order_id="A1"), "refund queued", "still refunding"])
    agent = make_agent(model, sink, graph=_graph(), continuity="conversation")
    assert agent.run_sync("about my invoice").cursor == "refund"
    second = agent.run_sync("thanks", continue_from=json.loads(json.dumps(agent.checkpoint())))
    routed = of(sink.events, TurnRouted)[-1]
    assert (routed.by, routed.from_skill, routed.to) == ("continuity", "refund", "refund")
    move = evaluated([e for e in sink.events if e.run_id == second.run_id], 1).cursor_move
    assert move is not None and (move.by, move.to) == ("continuity", "refund")
    assert second.cursor == "refund"


def test_given_no_continuity_when_the_next_turn_starts_then_the_cursor_starts_cold() -> None:
    sink = ListSink()
    model = ScriptedModel([call("lookup", order_id="A1"), "refund queued", "hello again"])
    agent = make_agent(model, sink, graph=_graph())
    assert agent.run_sync("about my invoice").cursor == "refund"
    second = agent.follow_up_sync("thanks")
    move = evaluated([e for e in sink.events if e.run_id == second.run_id], 1).cursor_move
    assert move is not None and (move.from_skill, move.to, move.by) == (None, "triage", "entry")


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda d: d.update(format="v0"), "format"),
    (lambda d: d.update(turns=-1), "turns"),
    (lambda d: d.update(history="nope"), "history"),
    (lambda d: d["history"].append({"role": "robot", "content": "x"}), "history[2]"),
    (lambda d: d["history"].append({"role": "user", "content": 7}), "history[2]"),
], ids=["format", "turns", "history-type", "bad-role", "bad-content"])
def test_given_a_malformed_checkpoint_when_continued_then_config_error_naming_the_field(
    mutate: Any, needle: str
) -> None:
    agent = make_agent(FunctionModel(_echo), ListSink())
    agent.run_sync("hello")
    saved = agent.checkpoint()
    mutate(saved)
    with pytest.raises(ConfigError) as raised:
        agent.run_sync("again", continue_from=saved)
    assert needle in str(raised.value) and "continue_from" in str(raised.value)


# ── limits and failures ─────────────────────────────────────────────────────


def test_given_a_model_that_keeps_calling_tools_when_the_limit_is_hit_then_it_wraps_up() -> None:
    def busy(request: LLMRequest) -> Reply:
        if not request.tools:
            return "partial answer"
        return [call("lookup", order_id="A1"), call("lookup", order_id="A2")]

    sink = ListSink()
    model = FunctionModel(busy)
    agent = make_agent(model, sink, tools=[tool(lookup)], max_iterations=2)
    result = agent.run_sync("look everything up")
    assert (result.answer, result.iterations, result.stopped_early) == (
        "partial answer", 3, "max-iterations")
    end = one(sink.events, RunEnd)
    assert (end.stopped_early, end.wrapped_up, end.pending_tool_calls) == (
        "max-iterations", True, 2)
    assert [r.chosen for r in of(sink.events, RouteDecided)] == [
        "tool-calls", "wrap-up", "final"]
    assert model.requests[-1].tools == ()
    history = agent.checkpoint()["history"]
    pending = [m for m in history if m.get("origin") == "engine#limit"]
    assert [m["tool_call_id"] for m in pending] == ["call_3", "call_4"]
    assert history[-2]["origin"] == "engine#wrap-up"


def test_given_a_raising_provider_when_run_then_run_error_event_and_run_error() -> None:
    def broken(request: LLMRequest) -> Reply:
        raise ConnectionError("socket closed")

    sink = ListSink()
    with pytest.raises(RunError, match="socket closed") as raised:
        make_agent(FunctionModel(broken, name="flaky"), sink).run_sync("hi")
    assert "'flaky'" in str(raised.value)
    failed = sink.events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error_type == "RunError" and "socket closed" in failed.message
    assert of(sink.events, RunEnd) == [] and len(of(sink.events, LLMStart)) == 1


async def test_given_a_running_loop_when_run_sync_is_called_then_run_error() -> None:
    agent = make_agent(FunctionModel(_echo), ListSink())
    with pytest.raises(RunError, match=r"await agent\.run"):
        agent.run_sync("hi")
    assert (await agent.run("hi")).answer == "seen 1: hi"


# ── replay determinism ──────────────────────────────────────────────────────


def _replayable(seed: int, ids: SeededIds | None = None) -> tuple[Agent, ListSink]:
    sink = ListSink()
    model = ScriptedModel([[call("read_skill", id="refund"), call("lookup", order_id="A1")],
                           "refund queued", "anything else?"])
    agent = Agent(provider=model, model="m", graph=_graph(), sink=sink, clock=StepClock(),
                  seed=seed, ids=ids, tools=[], injections=[define_steering("tone", "Be brief.")],
                  system_prompt="You are support.", max_iterations=5)
    return agent, sink


def _conversation(seed: int, ids: SeededIds | None = None) -> list[dict[str, Any]]:
    agent, sink = _replayable(seed, ids)
    agent.run_sync("about my invoice")
    agent.follow_up_sync("no thanks")
    return [to_record(e) for e in sink.events]


def _without_ids(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("run_id", "conversation_id")}
            for r in stream]


def test_given_the_same_agent_clock_and_seed_when_run_twice_then_streams_differ_only_in_ids(
) -> None:
    first, second = _conversation(seed=7), _conversation(seed=7)
    assert len(first) > 50
    assert _without_ids(first) == _without_ids(second)
    assert {r["run_id"] for r in first}.isdisjoint({r["run_id"] for r in second})


def test_given_seeded_ids_when_run_twice_then_identical_event_streams() -> None:
    first = _conversation(seed=7, ids=SeededIds(7))
    assert first == _conversation(seed=7, ids=SeededIds(7))
    assert _conversation(seed=7, ids=SeededIds(8))[0]["run_id"] != first[0]["run_id"]


async def test_given_a_running_loop_when_follow_up_sync_is_called_then_run_error() -> None:
    agent = make_agent(FunctionModel(_echo), ListSink())
    await agent.run("hi")
    with pytest.raises(RunError, match=r"await agent\.follow_up"):
        agent.follow_up_sync("again")
    assert (await agent.follow_up("again")).turn == 1
