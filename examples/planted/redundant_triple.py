"""Planted bug — a redundant triple: three sources each state a 1-year warranty.

An old manual, a forum post and a reseller FAQ each say the Vela machine's
warranty lasts 1 year; the policy says 2 years. The model trusts any
second-hand source over the policy, so any one of the three is enough:
removing one or two of them leaves the answer, removing all three fixes it.

* Culprit: the set ``manual-2019`` + ``forum-post`` + ``reseller-faq``;
  none of them alone is a cause, and the report heads with the set.
* Decoys: ``shop-voice``, ``care-guide`` and the true ``warranty-policy``.

Record a run, then explain it::

    python examples/planted/redundant_triple.py
    footprint why last --agent examples/planted/redundant_triple.py:make_agent
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

MESSAGE = "How long is the warranty on the Vela espresso machine?"
CULPRIT = ("manual-2019", "forum-post", "reseller-faq")
INNOCENT = ("shop-voice", "care-guide", "warranty-policy")

_SAID = re.compile(r"(?:says|states|reports):? the Vela warranty is (\d+) years?")
_POLICY = re.compile(r"Warranty policy: Vela (\d+) years")


def model(request: LLMRequest) -> Reply:
    """Any second-hand statement beats the policy."""
    said = _SAID.findall(request.system) or _POLICY.findall(request.system)
    if not said:
        return "I have no warranty figure for the Vela machine."
    years = said[0]
    return f"The Vela espresso machine has a warranty of {years} year{'s' * (years != '1')}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The appliance desk with three redundant wrong sources."""
    return Agent(
        provider=FunctionModel(model, name="planted-vela"), model="desk-small",
        system_prompt="You answer questions about Vela espresso machines.",
        injections=[
            define_steering("shop-voice", "Answer about the Vela espresso machine warranty."),
            define_fact("warranty-policy", "Warranty policy: Vela 2 years from purchase."),
            define_fact("care-guide", "Descale the Vela espresso machine every month."),
            define_fact("manual-2019", "The 2019 manual says the Vela warranty is 1 year."),
            define_fact("forum-post", "A forum post states the Vela warranty is 1 year."),
            define_fact("reseller-faq", "A reseller FAQ reports: the Vela warranty is 1 year."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-redundant-triple")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
