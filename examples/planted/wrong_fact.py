"""Planted bug — a wrong fact: an outdated supplier memo sets the grinder's price.

The shop's assistant answers price questions from the facts in its system
prompt. A model trusts the most recent-sounding statement, so the memo
``supplier-memo`` ("C40 now 189") beats the current price list (149 EUR).

* Culprit: the fact ``supplier-memo``. Without it the answer is
  "The C40 grinder costs 149 EUR." — only the number changes, so a
  first-word comparator would miss it.
* Decoys: ``grinder-care`` shares most words with the answer ("C40 grinder
  costs … EUR"), ``shop-voice`` asks for EUR and the product name; the
  true ``price-list`` is innocent too (without it the memo still wins).

Record a run, then explain it::

    python examples/planted/wrong_fact.py          # into ./.footprint or $FOOTPRINT_STORE
    footprint why last --agent examples/planted/wrong_fact.py:make_agent
"""

from __future__ import annotations

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
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "How much does the C40 grinder cost?"
CULPRIT = "supplier-memo"
INNOCENT = ("shop-voice", "price-list", "grinder-care")

_PRODUCT = re.compile(r"\b([A-Z]\d{2})\b")
_NOW = r"\b{product}\b[^.;]*?\bnow\s+(\d+)"
_LISTED = r"\b{product}\b[^.;]*?\b(\d+)\s*EUR"


def model(request: LLMRequest) -> Reply:
    """Read the product off the question and its price off the prompt; "now" wins."""
    question = next(m.content for m in request.messages if m.role == "user")
    found = _PRODUCT.search(question)
    if found is None:
        return "Which product do you mean?"
    product = found.group(1)
    newest = re.findall(_NOW.format(product=product), request.system)
    listed = re.findall(_LISTED.format(product=product), request.system)
    price = (newest or listed or [None])[-1]
    if price is None:
        return f"I have no price for the {product} grinder."
    return f"The {product} grinder costs {price} EUR."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shop assistant with the planted memo (reproducible: ``StepClock``, fixed seed)."""
    return Agent(
        provider=FunctionModel(model, name="planted-shop"), model="shop-small",
        system_prompt="You answer customers of the Brew & Bean coffee shop.",
        injections=[
            define_steering("shop-voice", "State every price in EUR and name the product."),
            define_fact("price-list", "Price list (current): C40 grinder 149 EUR; K2 kettle "
                        "59 EUR; V60 dripper 25 EUR."),
            define_fact("grinder-care", "Care: the C40 grinder costs nothing to service in "
                        "its first year; replacement burrs cost 35 EUR."),
            define_fact(CULPRIT, "Memo from the supplier (2022): C40 now 189."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-wrong-fact")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
