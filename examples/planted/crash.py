"""Planted trap — a harmless piece whose removal crashes the model, beside a real culprit.

The card desk approves a 7,500 EUR purchase because a stale fact
``limit-raise`` (10,000 EUR "until further notice") beats the real card
limit (5,000 EUR): the model trusts the highest limit it is told.
The steering ``reply-format`` only fixes the wording — but the model's
reply parser needs it and raises without it. Removing it does not change
the answer, it breaks the run: ``why`` must report it ``broke``, never a
cause.

* Culprit: the fact ``limit-raise``. Without it: "DECLINED — 7500 EUR is
  over the 5000 EUR limit."
* Broke: ``reply-format`` (its removal raises in the model).
* Decoys: ``card-limit`` holds the true limit (without it the raise still
  wins); ``card-voice`` shares the answer's words ("approved … EUR … limit").

Record a run, then explain it::

    python examples/planted/crash.py
    footprint why last --agent examples/planted/crash.py:make_agent
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

__all__ = ["BROKE", "CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent",
           "model"]

MESSAGE = "Will my card cover a 7500 EUR purchase today?"
CULPRIT = "limit-raise"
BROKE = "reply-format"
INNOCENT = ("card-limit", "card-voice")

_AMOUNT = re.compile(r"(\d+) EUR purchase")
_LIMIT = re.compile(r"limit[^.:]*:\s*(\d+) EUR", re.IGNORECASE)
_FORMAT = re.compile(r"Reply format: (.+)")


def model(request: LLMRequest) -> Reply:
    """Compare the amount with the highest limit stated, and reply in the stated format."""
    template = _FORMAT.search(request.system)
    if template is None:
        raise ValueError("the reply parser found no 'Reply format:' line in the prompt")
    question = next(m.content for m in request.messages if m.role == "user")
    amount = _AMOUNT.search(question)
    limits = [int(x) for x in _LIMIT.findall(request.system)]
    if amount is None or not limits:
        return "I cannot tell without the amount and your limit."
    within = int(amount.group(1)) <= max(limits)
    return template.group(1).format(verdict="APPROVED" if within else "DECLINED",
                                    amount=amount.group(1), relation="within" if within
                                    else "over", limit=max(limits))


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The card desk with the stale limit and the format the parser needs."""
    return Agent(
        provider=FunctionModel(model, name="planted-cards"), model="cards-small",
        system_prompt="You answer card holders' questions about their limits.",
        injections=[
            define_steering(BROKE, "Reply format: {verdict} — {amount} EUR is {relation} "
                            "the {limit} EUR limit."),
            define_steering("card-voice", "Say approved or declined first; amounts in EUR; "
                            "name the limit."),
            define_fact("card-limit", "Card limit: 5000 EUR per month."),
            define_fact(CULPRIT, "Temporary limit raise: 10000 EUR until further notice."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-crash")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
