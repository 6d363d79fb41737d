"""Planted bug — a redundant pair: two sources each carry the same wrong shelf load.

The model trusts a "tested" load over a "rated" one. Two pieces say the
TX-9 shelf was tested at 40 kg — an old spec sheet (fact) and a retrieved
forum post (rag); the current spec sheet rates it at 25 kg. Removing either
wrong source alone changes nothing: the other still says 40 kg.

* Culprit: the pair {``spec-2019``, ``forum-post``} — only removing both
  gives "The TX-9 shelf holds up to 25 kg."
* Decoys: ``shelf-mounting`` shares most words with the answer ("the TX-9
  shelf holds …") but states no load; the true ``spec-2024`` is innocent
  (without it the tested 40 kg still wins); ``diy-voice`` is style only.

Record a run, then explain it::

    python examples/planted/redundant_pair.py
    footprint why last --agent examples/planted/redundant_pair.py:make_agent
"""

from __future__ import annotations

import re

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    InjectionContext,
    Rule,
    RunResult,
    StepClock,
    define_fact,
    define_injection,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "How much weight can the TX-9 wall shelf hold?"
CULPRIT = ("spec-2019", "forum-post")
INNOCENT = ("diy-voice", "shelf-mounting", "spec-2024")

_TESTED = re.compile(r"tested[^.]*?(\d+)\s*kg", re.IGNORECASE)
_RATED = re.compile(r"rated[^.]*?(\d+)\s*kg", re.IGNORECASE)


def model(request: LLMRequest) -> Reply:
    """A tested load beats a rated one; otherwise the rating; otherwise no figure."""
    tested = _TESTED.findall(request.system)
    rated = _RATED.findall(request.system)
    load = (tested or rated or [None])[0]
    if load is None:
        return "I have no load figure for the TX-9 shelf."
    return f"The TX-9 shelf holds up to {load} kg."


def _about_shelves(ctx: InjectionContext) -> bool:
    return "shelf" in ctx.user_message.lower()


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The DIY shop's assistant with both wrong sources planted."""
    return Agent(
        provider=FunctionModel(model, name="planted-diy"), model="diy-small",
        system_prompt="You answer questions about the DIY shop's shelving.",
        injections=[
            define_steering("diy-voice", "Give one figure with its unit."),
            define_fact("shelf-mounting", "Mounting: the TX-9 shelf holds best with four "
                        "screws into studs; the TX-9 wall shelf needs a level."),
            define_fact("spec-2024", "TX-9 spec sheet (2024): rated load 25 kg."),
            define_fact("spec-2019", "TX-9 spec sheet (2019): tested to 40 kg."),
            define_injection("forum-post", "rag", Rule(active_when=_about_shelves),
                             system_prompt="Forum post: I tested my TX-9 with 40 kg of "
                                           "books, no problem.",
                             description="retrieved for a shelf question"),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-redundant-pair")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
