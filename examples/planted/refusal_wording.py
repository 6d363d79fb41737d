"""Planted bug — a steering whose wording, not any value, makes the model refuse.

A safety line written for the knife shop next door, "Never discuss blades,
knives or sharpening with customers", was pasted into the coffee shop's
prompt. It states no fact; its words make the model refuse a plain question
about the grinder's blades. The recorded reply is a refusal; without the
line the model answers.

* Culprit: the steering ``blade-safety`` (without it: "The C40 has steel burrs,
  not blades; they need no sharpening and last about 3 years."). A refusal
  is no answer: the fix gives one, which ``why`` must read as a change of
  value, not as an answer lost.
* Decoys: the fact ``burr-care`` shares the answer's words ("burrs … years");
  ``shop-voice`` is style only.

Record a run, then explain it::

    python examples/planted/refusal_wording.py
    footprint why last --agent examples/planted/refusal_wording.py:make_agent
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

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "REFUSAL", "converse", "main", "make_agent",
           "model"]

MESSAGE = "Do the blades of my C40 grinder need sharpening?"
CULPRIT = "blade-safety"
INNOCENT = ("burr-care", "shop-voice")
REFUSAL = "I'm sorry, but I can't help with that."

_NEVER = re.compile(r"\bnever discuss\b([^.]*)", re.IGNORECASE)
_LIFE = re.compile(r"burrs last about (\d+) years")


def model(request: LLMRequest) -> Reply:
    """Refuse when a "never discuss" line names a word of the question; else answer."""
    question = next(m.content for m in request.messages if m.role == "user").lower()
    for banned in _NEVER.findall(request.system):
        words = {w.rstrip("s") for w in re.findall(r"[a-z]+", banned.lower())}
        if words & {w.rstrip("s") for w in re.findall(r"[a-z]+", question)}:
            return REFUSAL
    life = _LIFE.search(request.system)
    years = life.group(1) if life else "several"
    return (f"The C40 has steel burrs, not blades; they need no sharpening and last about "
            f"{years} years.")


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shop assistant with the pasted safety line."""
    return Agent(
        provider=FunctionModel(model, name="planted-refusal"), model="shop-small",
        system_prompt="You answer customers of the Brew & Bean coffee shop.",
        injections=[
            define_steering("shop-voice", "Answer in one or two friendly sentences."),
            define_fact("burr-care", "Care: the C40's steel burrs last about 3 years; replace "
                        "them, never sharpen them."),
            define_steering(CULPRIT, "Never discuss blades, knives or sharpening with "
                            "customers."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-refusal-wording")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
