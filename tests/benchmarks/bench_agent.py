"""Agent figures: the reference host's own cost per loop iteration.

``agent_iteration_overhead_us``: median microseconds the host spends per
iteration (build the ctx, advance the cursor, evaluate, compose the three
slots, account for every event, run one tool call, record it) for an agent
with 50 injections and a 20-skill guarded graph, sending events to a
``NullSink``. A ``NullSink`` keeps no events, so the run builds none (nor
their payloads) while handing out every seq and clock reading as a recorded
run does. The model answers instantly from a prebuilt response, so the
figure is host overhead only. Target: <= 2,000 µs.

``agent_iteration_per_otel_span``: that figure over the cost of one OTel SDK span
(``bench_otel.span_us``), each sample of one beside a sample of the other so that
both see the same machine: a figure that holds across slower and faster days.
Target: <= 12.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from footprint.agent import Agent, StepClock, tool
from footprint.events import NullSink
from footprint.graph import SkillGraph, skill_graph
from footprint.injection import (
    Injection,
    InjectionContext,
    OnToolReturn,
    define_fact,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
)
from footprint.providers import LLMRequest, LLMResponse, ToolCall, Usage

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_otel import span_us

SKILLS = 20
INJECTIONS = 50
ITERATIONS = 20


class InstantModel:
    """A provider that answers at once: a ``step`` call each time, then a final answer."""

    name = "instant"

    def __init__(self, iterations: int) -> None:
        self._left = iterations
        self._calls = 0
        self._final = LLMResponse(content="done", usage=Usage(input_tokens=1, output_tokens=1))

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self._left -= 1
        if self._left <= 0:
            return self._final
        self._calls += 1
        call = ToolCall(id=f"c{self._calls}", name="step", arguments={"n": self._calls})
        return LLMResponse(content="", tool_calls=(call,), stop_reason="tool_use",
                           usage=Usage(input_tokens=1, output_tokens=1))


def step(n: int) -> str:
    """Take one step of the work."""
    return json.dumps({"score": 60 + n % 5, "n": n})


def _late(ctx: InjectionContext) -> bool:
    return ctx.iteration > 3


def _injections() -> list[Injection]:
    out: list[Injection] = []
    for k in range(INJECTIONS):
        kind = k % 4
        if kind == 0:
            out.append(define_steering(f"steer{k}", f"Steering rule number {k}: be precise."))
        elif kind == 1:
            out.append(define_instruction(f"rule{k}", f"Instruction {k} after iteration 3.",
                                          active_when=_late))
        elif kind == 2:
            out.append(define_fact(f"fact{k}", {"key": k, "value": f"fact {k}"}))
        else:
            out.append(define_injection(f"ontool{k}", "custom", OnToolReturn(tool_name="step"),
                                        system_prompt=f"After a step, remember note {k}."))
    return out


def _graph() -> SkillGraph:
    skills = [define_skill(f"s{n}", f"skill {n}", f"Body of skill {n}.") for n in range(SKILLS)]
    builder = skill_graph(*skills).entry(skills[0])
    for n in range(SKILLS):
        builder.route(skills[n], skills[(n + 1) % SKILLS], on_tool_return="step",
                      guard={"score": {"gte": 60}})
        builder.route(skills[n], skills[(n + 2) % SKILLS])
    return builder.build(check="off")


def one_run(graph: SkillGraph, injections: list[Injection]) -> float:
    """µs per iteration of one run of ``ITERATIONS`` iterations."""
    agent = Agent(provider=InstantModel(ITERATIONS), model="m", graph=graph,
                  injections=injections, tools=[tool(step)], sink=NullSink(),
                  clock=StepClock(), max_iterations=ITERATIONS + 5,
                  system_prompt="You are a benchmark.")
    start = time.perf_counter_ns()
    result = asyncio.run(agent.run("go"))
    took = time.perf_counter_ns() - start
    assert result.iterations == ITERATIONS, result
    return took / 1000 / ITERATIONS


def figures(quick: bool) -> dict[str, float]:
    graph, injections = _graph(), _injections()
    one_run(graph, injections)  # warm up
    samples, spans = [], []
    for _ in range(5 if quick else 30):
        samples.append(one_run(graph, injections))
        spans.append(span_us(quick=True))
    iteration = statistics.median(samples)
    return {"agent_iteration_overhead_us": round(iteration, 1),
            "agent_iteration_per_otel_span": round(iteration / statistics.median(spans), 2)}


if __name__ == "__main__":
    print(figures(quick=False))
