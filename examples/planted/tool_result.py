"""Planted bug — a tool result: a cached price feed returns last year's price.

The model asks the fastest price tool it is offered, ``price_feed``, and
quotes what it returns. The feed serves a stale cache (19 EUR); the
catalogue (29 EUR) is right. Nothing in the prompt tells the model to use
the feed: the wrong value comes from the tool itself.

* Culprit: the result of ``price_feed`` (dropping the tool makes the model
  ask ``catalog_price``). The report heads with it as the earliest removable
  link: what made the model choose the feed is outside what can be removed.
* Decoys: ``shop-voice`` and ``vat-note`` share the answer's words.

Record a run, then explain it::

    python examples/planted/tool_result.py
    footprint why last --agent examples/planted/tool_result.py:make_agent
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

MESSAGE = "What does the Moka pot M3 cost today?"
CULPRIT = "price_feed"
INNOCENT = ("shop-voice", "vat-note")

_SKU = re.compile(r"\b([A-Z]\d)\b")


def price_feed(sku: str) -> str:
    """The fast price feed (cached)."""
    return json.dumps({"sku": sku, "price": 19, "currency": "EUR", "cache": "2025-01"})


def catalog_price(sku: str) -> str:
    """The catalogue's price of a product."""
    return json.dumps({"sku": sku, "price": 29, "currency": "EUR"})


def model(request: LLMRequest) -> Reply:
    """Ask the feed when it is offered (else the catalogue), then quote its price."""
    question = next(m.content for m in request.messages if m.role == "user")
    sku = _SKU.search(question)
    if sku is None:
        return "Which product?"
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:
        offered = {t.name for t in request.tools}
        return call("price_feed" if "price_feed" in offered else "catalog_price", sku=sku.group(1))
    price = json.loads(results[-1])["price"]
    return f"The Moka pot {sku.group(1)} costs {price} EUR today."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shop assistant with two price tools, one of them stale."""
    return Agent(
        provider=FunctionModel(model, name="planted-feed"), model="shop-small",
        system_prompt="You answer price questions for the Brew & Bean shop.",
        injections=[
            define_steering("shop-voice", "Quote the Moka pot price in EUR, for today."),
            define_fact("vat-note", "Every price the shop quotes includes VAT."),
        ],
        tools=[price_feed, catalog_price],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-tool-result")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
