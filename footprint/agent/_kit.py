"""The Agent seen through the conformance kit's adapter (``footprint.hostkit``).

``AgentKitHost`` drives the Agent's own iteration machinery — the same
``begin_iteration``, ``compose``, batch execution and recording a real run
uses — with scripted tool results and ``read_skill`` picks, and reads back
what the kit checks. ``check_host(AgentKitHost)`` must pass all five
obligations.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from footprint.agent._agent import Agent
from footprint.agent._batch import execute_batch
from footprint.agent._clock import StepClock
from footprint.agent._compose import compose
from footprint.agent._emitter import RunEmitter
from footprint.agent._engine import begin_iteration
from footprint.agent._record import record_outcomes, record_starts
from footprint.agent._state import PERSON, Evidence, RunState
from footprint.agent._turn import declare_run
from footprint.events import ListSink, payload_of
from footprint.graph import SkillGraph
from footprint.hostkit import KitEvent, KitIteration
from footprint.injection import ToolResult
from footprint.providers import Message, ScriptedModel, ToolCall

__all__ = ["AgentKitHost"]


class AgentKitHost:
    """A kit adapter over a real ``Agent`` built on the kit's graph."""

    def __init__(self, graph: SkillGraph) -> None:
        self.sink = ListSink()
        self.agent = Agent(provider=ScriptedModel([]), model="kit-model", graph=graph,
                           sink=self.sink, clock=StepClock(), max_iterations=50)
        self._state: RunState | None = None
        self._em: RunEmitter | None = None
        self._base = Evidence(0, "run", "baseline")
        self._iteration = 0

    def start_run(self, user_message: str) -> None:
        self._state = RunState(user_message=user_message,
                               history=[Message(role="user", content=user_message,
                                                origin=PERSON)])
        self._em = RunEmitter(self.sink, self.agent.clock, f"kit-{len(self.sink.events)}", 0)
        self._base = Evidence(declare_run(self.agent.setup, self._em), "run", "baseline")
        self._iteration = 0

    def iterate(self, *, tool_results: Sequence[ToolResult] = (),
                picks: Sequence[str] = ()) -> KitIteration:
        state, em, setup = self._state, self._em, self.agent.setup
        if state is None or em is None:
            raise RuntimeError("start_run() first")
        self._iteration += 1
        state.last_batch = tuple(tool_results) if tool_results else None
        mark = len(self.sink.events)
        frame = begin_iteration(setup, state, em, self._iteration)
        comp = compose(setup, frame, state, em, self._base)
        calls = tuple(ToolCall(id=f"kit{self._iteration}_{k}", name="read_skill",
                               arguments={"id": p}) for k, p in enumerate(picks))
        record_starts(em, calls, f"llm#{self._iteration}")
        outs = asyncio.run(execute_batch(setup, state, frame, comp, calls, em))
        record_outcomes(setup, state, em, outs, f"llm#{self._iteration}")
        events = tuple(
            KitEvent(name=str(getattr(e, "type", "")), payload=payload_of(e))  # type: ignore[arg-type]
            for e in self.sink.events[mark:] if str(getattr(e, "type", "")).startswith("skill.")
        )
        return KitIteration(
            cursor=frame.cursor,
            active_skill_ids=tuple(i.id for i in frame.active if i.flavor == "skill"),
            accepted=tuple(o.pick.accepted if o.pick is not None else not o.error
                           for o in outs),
            pending_pick=state.pending_pick, events=events,
        )
