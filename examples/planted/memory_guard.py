"""Planted bug — a stale remembered value steers a guard to the wrong skill.

A skill graph ``billing -> auto_refund | manual_review``: both routes fire on
``start_refund``'s result, the guard reading the amount it was given
(``amount <= 100`` auto, ``> 100`` review; the guard is right). The
assistant's memory of an earlier chat, injected as a fact, says order R-9
was 80 EUR; it is 480 EUR now (an item was added). The model trusts its
memory, skips ``lookup_order`` and starts the refund with ``amount=80``, so
the guard routes the 480 EUR order to automatic refund.

* Culprit: the fact ``memory-r9``. Without it the model looks the order up,
  starts the refund with 480 and the guard sends it to review. The path
  shows the call's argument, the guard and the value it read.
* Decoys: ``refund-limits`` states the true policy and shares the answer's
  words; ``desk-voice`` is style only.

Record a run, then explain it::

    python examples/planted/memory_guard.py
    footprint why last --agent examples/planted/memory_guard.py:make_agent
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

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "build_graph", "converse", "main", "make_agent",
           "model"]

MESSAGE = "Please refund order R-9, the grinder was missing its hopper."
CULPRIT = "memory-r9"
INNOCENT = ("refund-limits", "desk-voice")

_ORDER = re.compile(r"\bR-\d+\b")
_REMEMBERED = re.compile(r"order (R-\d+) was (\d+) EUR")


def lookup_order(order_id: str) -> str:
    """Look up an order: items and the amount charged in EUR."""
    return json.dumps({"order_id": order_id, "items": 2, "amount": 480})


def start_refund(order_id: str, amount: float) -> str:
    """Open a refund for an order's amount (the graph routes it by the amount)."""
    return json.dumps({"order_id": order_id, "amount": amount, "opened": True})


def issue_refund(order_id: str, amount: float) -> str:
    """Refund an amount to the customer's original payment method."""
    return json.dumps({"order_id": order_id, "refunded": amount, "status": "issued"})


def flag_for_review(order_id: str, amount: float) -> str:
    """Send a refund to a supervisor for review."""
    return json.dumps({"order_id": order_id, "amount": amount, "queue": "supervisors"})


def build_graph() -> SkillGraph:
    """``billing`` routes to ``auto_refund`` up to 100 EUR, else to ``manual_review``."""
    billing = define_skill("billing", "Refund requests for an order.",
                           "Start the refund with start_refund and the order's amount.",
                           tools=[tool(lookup_order), tool(start_refund)],
                           auto_activate="currentSkill")
    auto = define_skill("auto_refund", "Small refunds, issued at once.",
                        "Refund the order with issue_refund; no review is needed.",
                        tools=[tool(issue_refund)], auto_activate="currentSkill")
    review = define_skill("manual_review", "Large refunds, reviewed by a supervisor.",
                          "Send the order to a supervisor with flag_for_review.",
                          tools=[tool(flag_for_review)], auto_activate="currentSkill")
    return (
        skill_graph(billing, auto, review)
        .entry(billing, match=Keywords(("refund",)))
        .route(billing, auto, on_tool_return="start_refund", guard={"amount": {"lte": 100}})
        .route(billing, review, on_tool_return="start_refund", guard={"amount": {"gt": 100}})
        .build(check="throw")
    )


def _amount(request: LLMRequest, order: str) -> float | None:
    """The amount: remembered in the prompt (trusted first), else looked up."""
    remembered = {m.group(1): m.group(2) for m in _REMEMBERED.finditer(request.system)}
    if order in remembered:
        return float(remembered[order])
    looked = [json.loads(m.content) for m in request.messages
              if m.role == "tool" and m.tool_name == "lookup_order"]
    return float(looked[-1]["amount"]) if looked else None


def model(request: LLMRequest) -> Reply:
    """Start the refund with the amount it knows (looking it up when it knows none), then
    call the active skill's tool and report what it did."""
    question = next(m.content for m in request.messages if m.role == "user")
    order = _ORDER.search(question)
    if order is None:
        return "Which order?"
    done = {m.tool_name for m in request.messages if m.role == "tool"}
    offered = {t.name for t in request.tools}
    amount = _amount(request, order.group(0))
    if amount is None and "lookup_order" in offered:
        return call("lookup_order", order_id=order.group(0))
    for name in ("start_refund", "issue_refund", "flag_for_review"):
        if name in offered and name not in done:
            return call(name, order_id=order.group(0), amount=amount)
    if "issue_refund" in done:
        return f"Refund of {amount:.0f} EUR for order {order.group(0)} issued automatically."
    if "flag_for_review" in done:
        return f"Order {order.group(0)} ({amount:.0f} EUR) is waiting for a supervisor's review."
    return f"I could not process order {order.group(0)}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The refund desk on its skill graph, with the remembered amount."""
    return Agent(
        provider=FunctionModel(model, name="planted-memory-guard"), model="refunds-small",
        system_prompt="You process refunds for the Brew & Bean shop with the active "
                      "skill's tools.",
        injections=[
            define_steering("desk-voice", "Name the order and the amount in EUR."),
            define_fact("refund-limits", "Refund limits: any refund above 100 EUR needs a "
                        "supervisor's review before it is issued."),
            define_fact(CULPRIT, "Memory of an earlier chat: order R-9 was 80 EUR."),
        ],
        graph=build_graph(), posture="rails",
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-memory-guard")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one request."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
