"""Planted bug — a fact written in another locale than the answer: a French supplier tariff.

The shop answers in English with US-style amounts (``€1,199.00``). A
supplier tariff pasted from a French document says ``1 249,00 €`` (space
grouping, decimal comma, sign after); the model trusts the dated tariff over
the price list. ``why`` must read both as 1249 EUR and the fix as 1199 EUR.

* Culprit: the fact ``tarif-fournisseur`` (without it: ``€1,199.00``).
* Decoys: ``price-list`` holds the true price and shares the answer's words;
  ``amount-style`` asks for US-style amounts (removing it re-words the answer
  to ``1249 EUR``, the same fact); ``shop-voice`` is style only.

Record a run, then explain it::

    python examples/planted/locale_fact.py
    footprint why last --agent examples/planted/locale_fact.py:make_agent
"""

from __future__ import annotations

import re
from decimal import Decimal

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

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "WORDING", "converse", "main", "make_agent",
           "model"]

MESSAGE = "How much is the C40 grinder now?"
CULPRIT = "tarif-fournisseur"
WORDING = ("amount-style",)
INNOCENT = ("price-list", "amount-style", "shop-voice")

_FRENCH = re.compile(r"C40 à (\d{1,3}(?:\u202f|\u00a0| )\d{3},\d{2}) €")
_LISTED = re.compile(r"C40 grinder (\d+(?:\.\d+)?) EUR")


def _french(amount: str) -> Decimal:
    """``1 249,00`` as 1249.00 (the model reads the French grouping and decimal comma)."""
    return Decimal(re.sub(r"[\u202f\u00a0 ]", "", amount).replace(",", "."))


def model(request: LLMRequest) -> Reply:
    """The dated tariff wins over the price list; amounts written as the style asks."""
    tariff = _FRENCH.search(request.system)
    listed = _LISTED.search(request.system)
    if tariff is not None:
        price = _french(tariff.group(1))
    elif listed is not None:
        price = Decimal(listed.group(1))
    else:
        return "I have no price for the C40 grinder."
    if "US-style" in request.system:
        return f"The C40 grinder costs €{price:,.2f} now."
    return f"The C40 grinder costs {price:.0f} EUR now."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shop assistant with the planted French tariff."""
    return Agent(
        provider=FunctionModel(model, name="planted-tariff"), model="shop-small",
        system_prompt="You answer customers of the Brew & Bean coffee shop in English.",
        injections=[
            define_steering("shop-voice", "Answer in one sentence and name the product."),
            define_steering("amount-style", "Write amounts US-style with the euro sign first."),
            define_fact("price-list", "Price list (current): C40 grinder 1199 EUR; K2 kettle "
                        "59 EUR."),
            define_fact(CULPRIT, "Tarif fournisseur (mars 2024) : moulin C40 à "
                        "1\u202f249,00 € TTC."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-locale-fact")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
