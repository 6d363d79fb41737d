"""Planted bug — a conjunction: a discount needs two pieces, and both are wrong together.

A fact says member-card holders get 25% off the Aero trainer (the offer
ended); an instruction tells the model to apply every discount the prompt
states. Only together do they make the quote 150 EUR instead of 200 EUR:
without either one, the model quotes the list price.

* Culprit: the conjunction ``member-discount`` and ``apply-discounts`` —
  removing either one alone fixes the answer, so both are root causes and
  the report's first line names both.
* Decoys: ``shop-voice`` and ``delivery-note``; ``price-list`` is true.

Record a run, then explain it::

    python examples/planted/conjunction.py
    footprint why last --agent examples/planted/conjunction.py:make_agent
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
    define_instruction,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "What will I pay for the Aero trainer with my member card?"
CULPRIT = ("member-discount", "apply-discounts")
INNOCENT = ("shop-voice", "delivery-note", "price-list")

_LIST = re.compile(r"Aero trainer: (\d+) EUR")
_OFF = re.compile(r"(\d+)% off the Aero trainer")


def model(request: LLMRequest) -> Reply:
    """The list price, less a stated discount only when told to apply discounts."""
    listed = _LIST.search(request.system)
    price = int(listed.group(1)) if listed else 200
    off = _OFF.search(request.system)
    if off and "apply every discount" in request.system.lower():
        price = price * (100 - int(off.group(1))) // 100
    return f"With your member card the Aero trainer costs {price} EUR."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The sports shop's assistant with the planted pair."""
    return Agent(
        provider=FunctionModel(model, name="planted-trainer"), model="shop-small",
        system_prompt="You quote prices for the Stride sports shop.",
        injections=[
            define_steering("shop-voice", "Quote the price of the Aero trainer in EUR."),
            define_fact("price-list", "Aero trainer: 200 EUR."),
            define_fact("delivery-note", "Member card holders get free delivery."),
            define_fact("member-discount", "Member card holders get 25% off the Aero trainer."),
            define_instruction("apply-discounts",
                               prompt="Apply every discount stated in this prompt."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-conjunction")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
