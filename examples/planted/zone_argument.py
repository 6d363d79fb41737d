"""Planted bug — a stale fact that acts only through the argument of a second tool call.

The model looks the order up (first call), then asks ``shipping_rate`` for
the rate to the order's city (second call). A zone table from 2023 in the
prompt puts York in zone 3, so the model passes ``zone=3``; the tool honours
a zone it is given. Without the table it passes the city alone and the tool
finds zone 2. The answer's number comes from the tool, the wrong value from
the argument: the path must show the call with its argument.

* Culprit: the fact ``zones-2023``. The result of ``shipping_rate`` is on
  its path (removing the tool loses the answer), not a cause of its own.
* Decoys: ``rate-note`` shares the answer's words ("shipping … EUR");
  ``courier-voice`` is style only.

Record a run, then explain it::

    python examples/planted/zone_argument.py
    footprint why last --agent examples/planted/zone_argument.py:make_agent
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

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "What will shipping cost for my order K-5?"
CULPRIT = "zones-2023"
INNOCENT = ("rate-note", "courier-voice")

_ORDER = re.compile(r"\bK-\d+\b")
_RATES = {1: 4, 2: 6, 3: 9}


def find_order(order_id: str) -> str:
    """An order's items and delivery city."""
    return json.dumps({"order_id": order_id, "items": 2, "city": "York"})


def shipping_rate(city: str, zone: int | None = None) -> str:
    """The shipping rate to a city in EUR (pass its zone when you know it)."""
    zone = zone if zone is not None else {"York": 2, "Leeds": 2}.get(city, 3)
    return json.dumps({"city": city, "zone": zone, "rate": _RATES[zone], "currency": "EUR"})


def model(request: LLMRequest) -> Reply:
    """Find the order, then its rate (with the zone a table in the prompt gives), then say it."""
    question = next(m.content for m in request.messages if m.role == "user")
    order = _ORDER.search(question)
    if order is None:
        return "Which order?"
    done = {m.tool_name: json.loads(m.content) for m in request.messages
            if m.role == "tool" and m.tool_name is not None}
    if "find_order" not in done:
        return call("find_order", order_id=order.group(0))
    city = done["find_order"]["city"]
    if "shipping_rate" not in done:
        zone = re.search(rf"\b{city} (?:is )?(?:in )?zone (\d)", request.system)
        args: dict[str, object] = {"city": city}
        if zone is not None:
            args["zone"] = int(zone.group(1))
        return call("shipping_rate", **args)
    rate = done["shipping_rate"]["rate"]
    return f"Shipping order {order.group(0)} to {city} costs {rate} EUR."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shipping desk with the planted zone table."""
    return Agent(
        provider=FunctionModel(model, name="planted-zones"), model="desk-small",
        system_prompt="You answer shipping questions for the Brew & Bean shop.",
        injections=[
            define_steering("courier-voice", "One sentence; name the order and the city."),
            define_fact("rate-note", "Shipping rates are quoted in EUR and include VAT."),
            define_fact(CULPRIT, "Zone table (2023): Leeds is in zone 2; York is in zone 3."),
        ],
        tools=[find_order, shipping_rate],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-zone-argument")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
