"""Planted bug — a bad guard threshold: a 400 EUR refund skips the supervisor.

A skill graph ``billing -> auto_refund | manual_review``. Both routes fire on
``lookup_order``'s result; the guard that should read ``amount <= 100``
reads ``amount <= 1000``, so order R-7 (400 EUR) is routed to
``auto_refund`` and refunded without review. The model only does what the
active skill's tools allow; the graph made the decision.

* Culprit: the cursor move ``billing -> auto_refund`` by the route on
  ``lookup_order``, guard ``amount lte 1000`` against the actual value 400
  (the final call's cursor ``stay`` follows back to it). A route is part of
  the graph, not an injection: ``why`` reports it as evidence with its chain.
* Decoys: the fact ``refund-limits`` states the true limit and shares the
  answer's words ("refund … EUR … supervisor"); ``desk-voice`` is style only.

Record a run, then explain it::

    python examples/planted/bad_guard.py
    footprint why last --agent examples/planted/bad_guard.py:make_agent
"""

from __future__ import annotations

import json
import re

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    Keywords,
    RunResult,
    SkillGraph,
    StepClock,
    define_fact,
    define_skill,
    define_steering,
    skill_graph,
    tool,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT_GUARD", "INNOCENT", "MESSAGE", "PLANTED_LIMIT", "build_graph", "converse",
           "main", "make_agent", "model"]

MESSAGE = "Please refund order R-7, the espresso machine arrived with a cracked tank."
PLANTED_LIMIT = 1000
"""The planted limit of the guard on ``billing -> auto_refund`` (the policy limit is 100)."""
CULPRIT_GUARD = {"amount": {"lte": PLANTED_LIMIT}}
INNOCENT = ("refund-limits", "desk-voice")

_ORDER = re.compile(r"\bR-\d+\b")


def lookup_order(order_id: str) -> str:
    """Look up an order: item and amount charged in EUR."""
    return json.dumps({"order_id": order_id, "item": "espresso machine", "amount": 400})


def issue_refund(order_id: str, amount: float) -> str:
    """Refund an amount to the customer's original payment method."""
    return json.dumps({"order_id": order_id, "refunded": amount, "status": "issued"})


def flag_for_review(order_id: str, amount: float) -> str:
    """Send a refund to a supervisor for review."""
    return json.dumps({"order_id": order_id, "amount": amount, "queue": "supervisors"})


def build_graph(limit: int = PLANTED_LIMIT) -> SkillGraph:
    """``billing`` routes to ``auto_refund`` up to ``limit`` EUR, else to ``manual_review``."""
    billing = define_skill("billing", "Refund requests for an order.",
                           "Look the order up with lookup_order first.",
                           tools=[tool(lookup_order)], auto_activate="currentSkill")
    auto = define_skill("auto_refund", "Small refunds, issued at once.",
                        "Refund the order with issue_refund; no review is needed.",
                        tools=[tool(issue_refund)], auto_activate="currentSkill")
    review = define_skill("manual_review", "Large refunds, reviewed by a supervisor.",
                          "Send the order to a supervisor with flag_for_review.",
                          tools=[tool(flag_for_review)], auto_activate="currentSkill")
    return (
        skill_graph(billing, auto, review)
        .entry(billing, match=Keywords(("refund",)))
        .route(billing, auto, on_tool_return="lookup_order", guard={"amount": {"lte": limit}})
        .route(billing, review, on_tool_return="lookup_order", guard={"amount": {"gt": limit}})
        .build(check="throw")
    )


def model(request: LLMRequest) -> Reply:
    """Call the active skill's tool once each, then report what the last one did."""
    question = next(m.content for m in request.messages if m.role == "user")
    order = _ORDER.search(question)
    if order is None:
        return "Which order?"
    results = {m.tool_name: json.loads(m.content) for m in request.messages
               if m.role == "tool" and m.tool_name is not None}
    offered = {t.name for t in request.tools}
    amount = results.get("lookup_order", {}).get("amount")
    for name in ("lookup_order", "issue_refund", "flag_for_review"):
        if name in offered and name not in results:
            args = {"order_id": order.group(0)}
            return call(name, **args) if amount is None else call(name, **args, amount=amount)
    if "issue_refund" in results:
        return f"Refund of {amount} EUR for order {order.group(0)} issued automatically."
    if "flag_for_review" in results:
        return f"Order {order.group(0)} ({amount} EUR) is waiting for a supervisor's review."
    return f"I could not process order {order.group(0)}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None, limit: int = PLANTED_LIMIT) -> Agent:
    """The refund desk on its skill graph; ``limit=100`` is the fixed guard."""
    return Agent(
        provider=FunctionModel(model, name="planted-refunds"), model="refunds-small",
        system_prompt="You process refunds for the Brew & Bean shop with the active "
                      "skill's tools.",
        injections=[
            define_steering("desk-voice", "Name the order and the amount in EUR."),
            define_fact("refund-limits", "Refund limits: any refund above 100 EUR needs a "
                        "supervisor's review before it is issued."),
        ],
        graph=build_graph(limit), posture="rails",
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-bad-guard")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one request."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
