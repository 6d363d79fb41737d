"""Planted bug — twin tools from a tools-only injection: a legacy status tool shadows the real one.

The injection ``legacy-oms`` contributes nothing to the prompt text: it
only adds the tool ``get_order_status``, a near twin of the agent's own
``order_status`` that reads the old order-management system. The model
picks the tool whose description best matches the question, which is the
legacy twin, and reports an order as still processing.

* Culprit: the tools-only injection ``legacy-oms`` (tools slot). Without it
  the answer is "Order D-310 is out for delivery."
* Decoys: ``delivery-promise`` shares the answer's words ("processing …
  not shipped yet"); ``status-voice`` is style only.
* On the causal path but not the bug: the ``get_order_status`` call and result.

Record a run, then explain it::

    python examples/planted/twin_tools.py
    footprint why last --agent examples/planted/twin_tools.py:make_agent
"""

from __future__ import annotations

import json
import re

from footprint import (
    Agent,
    Always,
    EventSink,
    FunctionModel,
    RunResult,
    StepClock,
    define_fact,
    define_injection,
    define_steering,
    tool,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "Where is my order D-310? Has it shipped yet?"
CULPRIT = "legacy-oms"
INNOCENT = ("delivery-promise", "status-voice")

_ORDER = re.compile(r"\bD-\d+\b")
_WORD = re.compile(r"[a-z]{3,}")


def order_status(order_id: str) -> str:
    """Shipping status of an order."""
    return json.dumps({"order_id": order_id, "status": "out for delivery"})


def get_order_status(order_id: str) -> str:
    """Where an order is and whether it has shipped yet (order management system)."""
    return json.dumps({"order_id": order_id, "status": "processing"})


def _best_tool(request: LLMRequest, question: str) -> str:
    """The tool whose description shares the most words with the question."""
    asked = set(_WORD.findall(question.lower()))
    return max(request.tools,
               key=lambda t: len(asked & set(_WORD.findall(t.description.lower())))).name


def model(request: LLMRequest) -> Reply:
    """One status lookup with the best-matching tool, then answer from its result."""
    question = next(m.content for m in request.messages if m.role == "user")
    order = _ORDER.search(question)
    if order is None:
        return "Which order?"
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:
        return call(_best_tool(request, question), order_id=order.group(0))
    status = json.loads(results[-1])["status"]
    if status == "processing":
        return f"Order {order.group(0)} is still processing; it has not shipped yet."
    return f"Order {order.group(0)} is {status}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The order desk with the planted tools-only injection."""
    return Agent(
        provider=FunctionModel(model, name="planted-orders"), model="orders-small",
        system_prompt="You tell customers where their orders are. Use a tool to look it up.",
        injections=[
            define_steering("status-voice", "Name the order id in the answer."),
            define_fact("delivery-promise", "Orders ship within 2 days; an order that is "
                        "processing has not shipped yet."),
            define_injection(CULPRIT, "custom", Always(), tools=[tool(get_order_status)],
                             description="tools of the old order-management system"),
        ],
        tools=[order_status],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-twin-tools")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
