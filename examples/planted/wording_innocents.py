"""Planted trap — innocents that change only the wording: a 24-hour clock and a € sign.

Two steerings change how the answer is *written* — ``clock-24h`` makes the
model write "13:00" instead of "1 pm", ``euro-sign`` "€45" instead of
"45 EUR" — never what it says. A stale flyer sets the price.

* Culprit: the fact ``old-flyer`` (45 EUR; the price list says 55 EUR).
* Innocent: ``clock-24h`` and ``euro-sign`` (removing them re-words the
  answer; ``why`` must not confirm them, and notes the wording change),
  ``price-list``.

Record a run, then explain it::

    python examples/planted/wording_innocents.py
    footprint why last --agent examples/planted/wording_innocents.py:make_agent
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

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "WORDING", "converse", "main", "make_agent",
           "model"]

MESSAGE = "When does the cheese tasting start, and what does a ticket cost?"
CULPRIT = "old-flyer"
WORDING = ("clock-24h", "euro-sign")
INNOCENT = (*WORDING, "price-list")

_NOW = re.compile(r"ticket now (\d+) EUR")
_LISTED = re.compile(r"tasting ticket: (\d+) EUR")


def model(request: LLMRequest) -> Reply:
    """The newest-sounding price, in the formats the prompt asks for."""
    price = (_NOW.findall(request.system) or _LISTED.findall(request.system) or ["?"])[-1]
    when = "13:00" if "24-hour clock" in request.system else "1 pm"
    cost = f"€{price}" if "€ sign" in request.system else f"{price} EUR"
    return f"The cheese tasting starts at {when}; a ticket costs {cost}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The deli's assistant with two format steerings and a stale flyer."""
    return Agent(
        provider=FunctionModel(model, name="planted-deli"), model="deli-small",
        system_prompt="You answer questions about events at the Fromagerie deli.",
        injections=[
            define_steering("clock-24h", "Write times on the 24-hour clock."),
            define_steering("euro-sign", "Write prices with the € sign."),
            define_fact("price-list", "Events: cheese tasting ticket: 55 EUR, at 13:00."),
            define_fact(CULPRIT, "Flyer (spring): cheese tasting ticket now 45 EUR."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-wording-innocents")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
