"""Planted bugs — two independent causes: a stale price memo and a stale shipping note.

The answer carries two values, each set by its own stale piece: the price
memo ("now 210 EUR") beats the catalogue's 300 EUR, and a 2022 warehouse
note ("ships in 9 days") beats its 3 days. Removing the memo fixes the
price only; removing the note fixes the shipping time only. They are not a
conjunction (that would need both for one wrong value): the report names
each with the value it changed.

* Culprits: the facts ``price-memo`` and ``ship-memo``, independently.
* Decoys: ``catalog`` shares most words with the answer (and holds the
  true values); ``shop-voice`` is style only.

Record a run, then explain it::

    python examples/planted/two_causes.py
    footprint why last --agent examples/planted/two_causes.py:make_agent
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

MESSAGE = "What does the Orbit desk cost, and when does it ship?"
CULPRIT = ("price-memo", "ship-memo")
INNOCENT = ("catalog", "shop-voice")

_PRICE = re.compile(r"Orbit desk (?:now )?(\d+) EUR")
_SHIPS = re.compile(r"ships in (\d+) days")


def model(request: LLMRequest) -> Reply:
    """The last price and the last shipping time the prompt states."""
    price = (_PRICE.findall(request.system) or [None])[-1]
    days = (_SHIPS.findall(request.system) or [None])[-1]
    if price is None or days is None:
        return "Sorry, I cannot quote the Orbit desk."
    return f"The Orbit desk costs {price} EUR and ships in {days} days."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The furniture shop's assistant with two stale pieces planted."""
    return Agent(
        provider=FunctionModel(model, name="planted-desko"), model="shop-small",
        system_prompt="You answer customers of the Desko furniture shop.",
        injections=[
            define_steering("shop-voice", "Be brief."),
            define_fact("catalog", "Catalogue: the Orbit desk 300 EUR; the Orbit desk ships "
                        "in 3 days."),
            define_fact("price-memo", "Memo 2023: Orbit desk now 210 EUR."),
            define_fact("ship-memo", "Warehouse note 2022: the desk ships in 9 days."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-two-causes")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
