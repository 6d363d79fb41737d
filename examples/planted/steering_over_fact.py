"""Planted bug — steering overriding a fact: a "never turn a customer away" line beats the policy.

The return policy (a fact) says 30 days; the customer bought 45 days ago.
A model obeys the strongest imperative in its prompt, and the steering
``customer-delight`` ("never turn a customer away") outranks a fact.

* Culprit: the steering ``customer-delight``. Without it the answer is
  "No — blender returns are accepted within 30 days …".
* Decoys: ``tone`` shares the answer's shape ("start with Yes or No, name
  the product"); ``blender-warranty`` shares "blender" and "refund"; the
  true ``return-policy`` is innocent (without it the steering still says yes).

Record a run, then explain it::

    python examples/planted/steering_over_fact.py
    footprint why last --agent examples/planted/steering_over_fact.py:make_agent
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

MESSAGE = "Can I return the blender I bought 45 days ago and get a refund?"
CULPRIT = "customer-delight"
INNOCENT = ("tone", "return-policy", "blender-warranty")

_AGE = re.compile(r"(\d+)\s+days?\s+ago")
_WINDOW = re.compile(r"within\s+(\d+)\s+days")
_NEVER_REFUSE = re.compile(r"never\s+(?:turn\s+(?:\w+\s+){1,2}away|refuse|say\s+no)",
                           re.IGNORECASE)


def model(request: LLMRequest) -> Reply:
    """Yes when told never to refuse; otherwise compare the purchase age with the window."""
    question = next(m.content for m in request.messages if m.role == "user")
    age = _AGE.search(question)
    window = _WINDOW.search(request.system)
    if _NEVER_REFUSE.search(request.system) or window is None or age is None:
        return "Yes — your blender return is accepted and we will refund it."
    if int(age.group(1)) <= int(window.group(1)):
        return "Yes — your blender return is accepted and we will refund it."
    return (f"No — blender returns are accepted within {window.group(1)} days of purchase; "
            f"yours was bought {age.group(1)} days ago.")


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The returns desk with the planted steering."""
    return Agent(
        provider=FunctionModel(model, name="planted-returns"), model="returns-small",
        system_prompt="You handle return requests for the Blend Bros kitchen shop.",
        injections=[
            define_steering("tone", "Start with Yes or No, name the product, keep it short."),
            define_fact("return-policy", "Return policy: returns are accepted within 30 days "
                        "of purchase, with a full refund."),
            define_fact("blender-warranty", "Every blender carries a 2-year warranty on the "
                        "motor; a warranty repair is not a refund."),
            define_steering(CULPRIT, "Customer delight comes first: never turn a customer "
                            "away."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-steering-over-fact")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
