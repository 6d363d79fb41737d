"""Planted trap — numbers written in words: "three seats" is 3 seats, re-worded.

The tour desk's assistant reads the free seats off its prompt; the newest
line wins, so last week's roster (3 seats) beats today's (7). The steering
``spell-numbers`` only changes how the number is *written* ("three" instead
of "3"): removing it changes no fact.

* Culprit: the fact ``old-roster``. Without it the answer is "There are
  seven seats left on the Tuesday tour."
* Innocent: ``spell-numbers`` (removing it re-words the number; ``why`` must
  not confirm it, nor report a conjunction with the culprit, and notes the
  wording change), ``roster`` (the true count, but the old roster still wins
  without it; it shares most words with the answer), ``tour-voice``.

Record a run, then explain it::

    python examples/planted/number_words.py
    footprint why last --agent examples/planted/number_words.py:make_agent
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

MESSAGE = "How many seats are left on the Tuesday tour?"
CULPRIT = "old-roster"
WORDING = ("spell-numbers",)
INNOCENT = (*WORDING, "roster", "tour-voice")

_SEATS = re.compile(r"(\d+) seats left")
_SMALL = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
          "ten", "eleven", "twelve")


def model(request: LLMRequest) -> Reply:
    """The newest seat count in the prompt, in words when the prompt asks for it."""
    found = _SEATS.findall(request.system)
    if not found:
        return "Sorry, I cannot see the roster."
    seats = int(found[-1])
    words = "in words" in request.system and seats < len(_SMALL)
    return f"There are {_SMALL[seats] if words else seats} seats left on the Tuesday tour."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The tour desk's assistant with a number-style steering and last week's roster."""
    return Agent(
        provider=FunctionModel(model, name="planted-tours"), model="tour-small",
        system_prompt="You book city walking tours.",
        injections=[
            define_steering("tour-voice", "Be brief."),
            define_steering("spell-numbers", "Write small numbers in words."),
            define_fact("roster", "Roster (today): there are 7 seats left on the Tuesday "
                        "tour."),
            define_fact(CULPRIT, "Roster (last week): Tuesday, 3 seats left."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-number-words")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
