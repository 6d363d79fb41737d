"""Planted bug — a redundant pair of two kinds: a stale memo and a promotions tool.

The model asks the ``promo_lookup`` tool for a discount, and also honours
any discount its prompt states. An expired memo (fact) and the tool's
result each say 30% off the Orbit desk: either alone still gives 210 EUR;
the list price is 300 EUR.

* Culprit: the pair {``spring-memo``, the result of ``promo_lookup``} —
  only removing both (the fact, and the tool dropped) gives "The Orbit desk
  costs 300 EUR today." The headline names each by its own label (``fact
  'spring-memo'`` and ``tool promo_lookup #call_1``), never a bare call id.
* Decoys: ``desk-care`` shares most words with the answer ("the Orbit desk
  costs … EUR today") but states no discount; ``shop-voice`` is style only;
  ``price-list`` is needed for any price (necessary, not a cause).

Record a run, then explain it::

    python examples/planted/mixed_pair.py
    footprint why last --agent examples/planted/mixed_pair.py:make_agent
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

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model",
           "promo_lookup"]

MESSAGE = "What does the Orbit desk cost today?"
CULPRIT = ("spring-memo", "promo_lookup")
INNOCENT = ("desk-care", "shop-voice")

_LISTED = re.compile(r"Orbit desk (\d+) EUR")
_MEMO = re.compile(r"(\d+)% off all desks")


def promo_lookup(item: str) -> str:
    """The promotions running for an item."""
    return json.dumps({"item": item, "discount_pct": 30})


def model(request: LLMRequest) -> Reply:
    """Ask for promotions when the tool is there, then price the desk with any discount."""
    results = {m.tool_name: m.content for m in request.messages if m.role == "tool"}
    if "promo_lookup" in {t.name for t in request.tools} and "promo_lookup" not in results:
        return call("promo_lookup", item="Orbit desk")
    listed = _LISTED.search(request.system)
    if listed is None:
        return "Sorry, I cannot price the Orbit desk."
    offs = [int(x) for x in _MEMO.findall(request.system)]
    if "promo_lookup" in results:
        offs.append(int(json.loads(results["promo_lookup"])["discount_pct"]))
    price = int(listed.group(1)) * (100 - max(offs, default=0)) // 100
    return f"The Orbit desk costs {price} EUR today."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The furniture shop's assistant with the planted memo and promotions tool."""
    return Agent(
        provider=FunctionModel(model, name="planted-desks"), model="shop-small",
        system_prompt="You quote prices for the Desko furniture shop.",
        injections=[
            define_steering("shop-voice", "Quote prices in EUR and say 'today'."),
            define_fact("price-list", "Prices: Orbit desk 300 EUR."),
            define_fact("desk-care", "The Orbit desk costs nothing to assemble today; the "
                        "Orbit desk costs 0 EUR in fees."),
            define_fact("spring-memo", "Memo (expired 2024): 30% off all desks."),
        ],
        tools=[promo_lookup],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-mixed-pair")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
