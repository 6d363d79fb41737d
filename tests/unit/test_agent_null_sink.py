"""A sink that keeps no events (``NullSink``) is sent none, so none is built; a sink that
keeps them gets exactly the events it always got, seq for seq and tick for tick."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footprint.agent import Agent, RunResult, SeededIds, StepClock, tool
from footprint.agent._emitter import RunEmitter
from footprint.events import (
    EventBase,
    EventSink,
    ListSink,
    NullSink,
    RunStart,
    keeps_events,
    to_record,
)
from footprint.graph import skill_graph
from footprint.injection import (
    InjectionContext,
    OnToolReturn,
    define_fact,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
)
from footprint.providers import ScriptedModel, call
from recorder import Recorder


def step(n: int) -> str:
    """Take one step of the work."""
    return json.dumps({"score": 60 + n, "n": n})


def _late(ctx: InjectionContext) -> bool:
    return ctx.iteration > 1


def _agent(sink: EventSink, clock: StepClock, steering: str) -> Agent:
    """A run that routes on a guarded tool return, picks a skill, and composes every slot."""
    skills = [define_skill(f"s{n}", f"skill {n}", f"Body of skill {n}.") for n in range(3)]
    graph = (skill_graph(*skills).entry(skills[0])
             .route(skills[0], skills[1], on_tool_return="step", guard={"score": {"gte": 61}})
             .route(skills[1], skills[2]).build(check="off"))
    injections = [
        define_steering("steer", steering),
        define_instruction("rule", "After the first iteration, be brief.", active_when=_late),
        define_fact("fact", {"key": 1}),
        define_injection("ontool", "custom", OnToolReturn(tool_name="step"),
                         system_prompt="After a step, remember the note."),
    ]
    model = ScriptedModel([call("step", n=0), call("step", n=1), call("read_skill", id="s2"),
                           call("list_skills"), "done"])
    return Agent(provider=model, model="m", graph=graph, injections=injections,
                 tools=[tool(step)], sink=sink, clock=clock, ids=SeededIds(7),
                 max_iterations=8, system_prompt="You are a test.")


def _run(sink: EventSink, steering: str = "Be precise.") -> tuple[RunResult, int]:
    """The run's result and the clock's next reading after it (how often it was read)."""
    clock = StepClock()
    result = _agent(sink, clock, steering).run_sync("go")
    return result, clock.now_ns()


def _records(events: list[EventBase]) -> list[dict[str, Any]]:
    out = [to_record(e) for e in events]
    for rec in out:
        rec.pop("conversation_id", None)  # drawn afresh for each agent
    return out


def test_given_a_list_sink_beside_a_null_sink_when_a_run_records_then_its_events_are_unchanged(
) -> None:
    alone = ListSink()
    _run(alone)
    beside = ListSink()
    with Recorder([NullSink(), beside]) as rec:
        _run(rec)
    assert len(alone.events) > 40
    assert _records(beside.events) == _records(alone.events)


@pytest.mark.parametrize("steering", ["Be precise.", "Be precise. " * 400],
                         ids=["within-the-cap", "over-the-cap"])
def test_given_only_a_null_sink_when_a_run_ends_then_its_answer_ids_and_clock_are_the_same(
    steering: str,
) -> None:
    kept = ListSink()
    with_events, kept_clock = _run(kept, steering)
    without, null_clock = _run(NullSink(), steering)
    pressed = any(getattr(e, "type", "") == "context.budget_pressure" for e in kept.events)
    assert pressed == (len(steering) > 4000)
    assert without == with_events
    assert without.answer == "done"
    assert null_clock == kept_clock  # one clock reading per event, kept or not
    assert [e.seq for e in kept.events] == list(range(len(kept.events)))


def test_given_a_null_sink_when_events_are_emitted_then_seqs_advance_and_no_payload_is_built(
) -> None:
    clock = StepClock(start_ns=0, step_ns=1)
    em = RunEmitter(NullSink(), clock, "run", 0)
    built: list[str] = []

    def payload() -> dict[str, Any]:
        built.append("built")
        return {"user_message": "m"}

    seqs = [em.emit(RunStart, "run", user_message="m"), em.emit_with(RunStart, "run", payload),
            em.skip(3), em.emit(RunStart, "run", user_message="m")]
    assert (seqs, built, clock.now_ns()) == ([0, 1, 2, 5], [], 7)


def test_given_a_keeping_sink_when_emit_with_is_used_then_the_event_is_built_as_by_emit(
) -> None:
    sink = ListSink()
    em = RunEmitter(sink, StepClock(start_ns=0, step_ns=1), "run", 2)
    em.emit(RunStart, "run", user_message="m")
    em.emit_with(RunStart, "run", lambda: {"user_message": "m"})
    first, second = (to_record(e) for e in sink.events)
    assert (first.pop("seq"), first.pop("ts"), second.pop("seq"), second.pop("ts")) == (0, 1, 1, 2)
    assert first == second


def test_given_sinks_when_asked_whether_they_keep_events_then_only_a_null_sink_says_no() -> None:
    class Counting(NullSink):
        keeps_events = True

    assert not keeps_events(NullSink())
    assert keeps_events(ListSink())
    assert keeps_events(Counting())
    assert keeps_events(object())
