"""Planted bug — stale earlier-turn history: a follow-up ships to last year's address.

A two-turn conversation. In turn 1 the customer asks where an old order
went; the model looks it up and says "Order 41 went to 12 Old Street,
Leeds." In turn 2 they ask where the new order will ship. The model reuses
the address already in the conversation instead of reading the profile.

* Culprit: the history message written by ``llm#2`` of turn 1 (the
  assistant's "Order 41 went to 12 Old Street, Leeds."). Withheld, the model
  calls ``profile_address`` and answers "Order 88 will ship to 5 New Road,
  York."
* Decoys: the turn-1 question (history, from the person) shares words with
  the answer ("order … address"); the fact ``shipping-policy`` says to ship to
  the profile address and shares "ship … address"; ``courier-voice`` is style.

Record the conversation (two runs), then explain the second::

    python examples/planted/stale_history.py
    footprint why last --agent examples/planted/stale_history.py:make_agent
"""

from __future__ import annotations

import json
import re

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    RunResult,
    StepClock,
    define_fact,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT_TEXT", "FIRST", "INNOCENT", "MESSAGE", "converse", "main", "make_agent",
           "model"]

FIRST = "What address did my order 41 go to last year?"
MESSAGE = "Please ship my new order 88. Which address will it go to?"
CULPRIT_TEXT = "Order 41 went to 12 Old Street, Leeds."
"""The stale turn-1 answer (origin ``llm#2`` of the first run)."""
INNOCENT = ("shipping-policy", "courier-voice")

_ORDER = re.compile(r"\border (\d+)\b")
_WENT_TO = re.compile(r"went to ([^.]+)\.")


def order_history(order_id: str) -> str:
    """Where and when a past order was delivered."""
    return json.dumps({"order_id": order_id, "address": "12 Old Street, Leeds", "year": 2023})


def profile_address() -> str:
    """The customer's current delivery address from their profile."""
    return json.dumps({"address": "5 New Road, York"})


def model(request: LLMRequest) -> Reply:
    """Answer the latest question; an address already in the conversation is reused."""
    user = [m.content for m in request.messages if m.role == "user"][-1]
    order = _ORDER.search(user)
    number = order.group(1) if order else "?"
    results = {m.tool_name: m.content for m in request.messages if m.role == "tool"}
    if "last year" in user or "did my order" in user:
        if "order_history" not in results:
            return call("order_history", order_id=number)
        address = json.loads(results["order_history"])["address"]
        return f"Order {number} went to {address}."
    known = [hit.group(1) for m in request.messages if m.role == "assistant"
             for hit in [_WENT_TO.search(m.content)] if hit is not None]
    if known:
        return f"Order {number} will ship to {known[-1]}."
    if "profile_address" not in results:
        return call("profile_address")
    return f"Order {number} will ship to {json.loads(results['profile_address'])['address']}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The delivery desk; ``converse`` runs its two-turn conversation."""
    return Agent(
        provider=FunctionModel(model, name="planted-delivery"), model="delivery-small",
        system_prompt="You help customers of the Brew & Bean web shop with deliveries.",
        injections=[
            define_steering("courier-voice", "Answer in one sentence."),
            define_fact("shipping-policy", "New orders ship to the delivery address on the "
                        "customer's profile."),
        ],
        tools=[order_history, profile_address],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-stale-history")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: the old-order question, then the follow-up."""
    agent.run_sync(FIRST)
    return agent.follow_up_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
