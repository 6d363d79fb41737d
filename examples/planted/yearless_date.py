"""Planted trap — a date written without its year: "March 3" is 2026-03-03, re-worded.

The gym's assistant reads the renewal date off its prompt; the newest line
wins, so a stale calendar export (2026-03-03) beats the member's terms
(2026-04-03). The steering ``date-style`` only changes how the date is
*written* ("March 3" instead of "2026-03-03") — a year left out is no other
year, so removing it changes no fact.

* Culprit: the fact ``old-calendar``. Without it the answer is "Your
  membership renews on April 3."
* Innocent: ``date-style`` (removing it re-words the date; ``why`` must not
  confirm it nor call it necessary, and notes the wording change),
  ``renewal-terms`` (the true date, but the export still wins without it),
  ``renewal-reminder`` (shares most words with the answer), ``gym-voice``.

Record a run, then explain it::

    python examples/planted/yearless_date.py
    footprint why last --agent examples/planted/yearless_date.py:make_agent
"""

from __future__ import annotations

import re
from datetime import date

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

MESSAGE = "When does my gym membership renew?"
CULPRIT = "old-calendar"
WORDING = ("date-style",)
INNOCENT = (*WORDING, "renewal-terms", "renewal-reminder", "gym-voice")

_RENEWS = re.compile(r"renews on (\d{4}-\d{2}-\d{2})")


def model(request: LLMRequest) -> Reply:
    """The last renewal date in the prompt, written as the prompt asks."""
    found = _RENEWS.findall(request.system)
    if not found:
        return "Sorry, I cannot find your renewal date."
    day = date.fromisoformat(found[-1])
    text = f"{day:%B} {day.day}" if "Month Day" in request.system else day.isoformat()
    return f"Your membership renews on {text}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The gym's assistant with a date-format steering and a stale calendar export."""
    return Agent(
        provider=FunctionModel(model, name="planted-gym"), model="gym-small",
        system_prompt="You help members of the Pulse gym.",
        injections=[
            define_steering("gym-voice", "Be brief."),
            define_steering("date-style", "Write dates as Month Day, without the year."),
            define_fact("renewal-reminder", "Your gym membership renews by itself; we email "
                        "you the week your membership renews."),
            define_fact("renewal-terms", "Ana's membership renews on 2026-04-03 (joined "
                        "in April)."),
            define_fact(CULPRIT, "Calendar export (2025): membership renews on 2026-03-03."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-yearless-date")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
