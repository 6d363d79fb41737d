"""Planted bug — a cause only visible after a model escalation: a stale fee the big model reads.

The desk runs on a small model inside a skill graph (``triage -> refund ->
audit``). Asked about a late-return fee, the small model keeps asking for the
``audit`` skill, which the graph refuses from ``triage``; after two refusals
the agent escalates to a larger model. Only that model reads the facts: it
quotes the last late-return fee in its prompt, from a 2021 memo (15 EUR; the
current policy says 5 EUR). The small model never looked at the memo, so the
calls before the escalation carry it without using it.

* Culprit: the fact ``late-fee-2021`` (without it the escalated model quotes
  5 EUR). The re-runs escalate the same way: the cause is read where the
  large model answered.
* Decoys: ``fee-policy`` holds the true fee and shares the answer's words;
  ``desk-voice`` is style only.

Record a run, then explain it::

    python examples/planted/escalated_fee.py
    footprint why last --agent examples/planted/escalated_fee.py:make_agent
"""

from __future__ import annotations

import re

from footprint import (
    Agent,
    EscalationPolicy,
    EventSink,
    FunctionModel,
    RunResult,
    SkillGraph,
    StepClock,
    define_fact,
    define_skill,
    define_steering,
    skill_graph,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "big_model", "converse", "main", "make_agent",
           "small_model"]

MESSAGE = "What is the late-return fee for order R-4?"
CULPRIT = "late-fee-2021"
INNOCENT = ("fee-policy", "desk-voice")

_FEE = re.compile(r"Late-return fee[^:]*: (\d+) EUR")


def small_model(request: LLMRequest) -> Reply:
    """The small model asks for the audit skill, whatever the graph says."""
    return call("read_skill", id="audit")


def big_model(request: LLMRequest) -> Reply:
    """The escalated model answers from the prompt: the last late-return fee stated."""
    fees = _FEE.findall(request.system)
    if not fees:
        return "I have no late-return fee for order R-4."
    return f"The late-return fee for order R-4 is {fees[-1]} EUR."


def _graph() -> SkillGraph:
    triage = define_skill("triage", "Sort a customer's request.", "Find the order first.")
    refund = define_skill("refund", "Refund an order.", "Refund the order.")
    audit = define_skill("audit", "Audit a refund.", "Check the refund.")
    return (skill_graph(triage, refund, audit).entry(triage)
            .route(triage, refund, on_tool_return="lookup")
            .route(refund, audit, on_tool_return="flag").build(check="off"))


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The desk on a small model, escalating to a larger one after two refused picks."""
    return Agent(
        provider=FunctionModel(small_model, name="planted-small"), model="desk-small",
        system_prompt="You answer questions about orders of the Brew & Bean shop.",
        injections=[
            define_steering("desk-voice", "One sentence; name the order."),
            define_fact("fee-policy", "Late-return fee (current policy): 5 EUR per order."),
            define_fact(CULPRIT, "Late-return fee (memo, 2021): 15 EUR per order."),
        ],
        graph=_graph(), max_iterations=6,
        escalation=EscalationPolicy(provider=FunctionModel(big_model, name="planted-big"),
                                    model="desk-large", after_refusals=2),
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-escalated-fee")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
