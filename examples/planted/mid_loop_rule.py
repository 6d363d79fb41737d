"""Planted bug — a rule active mid-loop only: a staff rate applied to any member found.

The model looks the customer up (``lookup_member``), then picks a price
tool, then answers. The instruction ``staff-rate`` is live only in the
iteration right after a member lookup ("any member found gets the staff
price"), so it lands in the prompt of the second model call alone — not in
the first, not in the one that answers. It makes that call choose
``staff_price`` (60 EUR) instead of ``list_price`` (80 EUR).

* Culprit: the instruction ``staff-rate``. The ``staff_price`` result it
  produced is a mediator: the report's path reads
  ``instruction 'staff-rate' → llm#2 chose staff_price → result … → answer``.
* Decoys: ``shop-voice`` and ``lamp-care``.

Record a run, then explain it::

    python examples/planted/mid_loop_rule.py
    footprint why last --agent examples/planted/mid_loop_rule.py:make_agent
"""

from __future__ import annotations

import json

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    InjectionContext,
    RunResult,
    StepClock,
    define_fact,
    define_instruction,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "I am ana@example.com: what do I pay for the Nord lamp?"
CULPRIT = "staff-rate"
INNOCENT = ("shop-voice", "lamp-care")


def lookup_member(email: str) -> str:
    """The loyalty programme's record of a customer."""
    return json.dumps({"email": email, "member": True, "tier": "gold", "staff": False})


def list_price(item: str) -> str:
    """The price a customer pays."""
    return json.dumps({"item": item, "price": 80})


def staff_price(item: str) -> str:
    """The price an employee pays."""
    return json.dumps({"item": item, "price": 60})


def _after_lookup(ctx: InjectionContext) -> bool:
    last = ctx.last_tool_result
    return last is not None and last.tool_name == "lookup_member"


def model(request: LLMRequest) -> Reply:
    """Look the customer up, pick a price tool (the staff one when told), then answer."""
    done = [m.tool_name for m in request.messages if m.role == "tool"]
    if not done:
        return call("lookup_member", email="ana@example.com")
    if len(done) == 1:
        staff = "staff price" in request.system and "staff_price" in {t.name for t in
                                                                      request.tools}
        return call("staff_price" if staff else "list_price", item="Nord lamp")
    price = json.loads(next(m.content for m in reversed(request.messages)
                            if m.role == "tool"))["price"]
    return f"You pay {price} EUR for the Nord lamp."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The lighting shop's assistant with the planted mid-loop rule."""
    return Agent(
        provider=FunctionModel(model, name="planted-lamps"), model="shop-small",
        system_prompt="You quote prices for the Lumen lighting shop.",
        injections=[
            define_steering("shop-voice", "Quote the Nord lamp price in EUR."),
            define_fact("lamp-care", "The Nord lamp takes an E27 bulb."),
            define_instruction(CULPRIT, prompt="Any member found by lookup_member gets the "
                               "staff price.", active_when=_after_lookup),
        ],
        tools=[lookup_member, list_price, staff_price],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-mid-loop-rule")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
