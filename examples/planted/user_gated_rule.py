"""Planted bug — a rule gated by what the customer said in turn 1: a student rate two years old.

A two-turn conversation. In turn 1 the customer says they are a student; in
turn 2 they ask what the annual pass costs. The instruction ``student-rate``
is active only once a user message says "student", and it still carries the
2024 rate (60 EUR); the current price list gives students 20% off.

* Culprit: the instruction ``student-rate`` (without it the answer is the
  current student price, 96 EUR). The customer's turn-1 message gates the
  rule: removing it changes the answer too, but a person's own words are
  never a root cause — ``why`` says "because the user said …" beside the
  root instead.
* Decoys: the fact ``price-list`` shares the answer's words ("annual pass
  costs … EUR"); ``desk-voice`` is style only.

Record the conversation (two runs), then explain the second::

    python examples/planted/user_gated_rule.py
    footprint why last --agent examples/planted/user_gated_rule.py:make_agent
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
from footprint.injection import InjectionContext
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "FIRST", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

FIRST = "Hi, I'm a student at the Leeds College of Music."
MESSAGE = "How much is the annual pass for me?"
CULPRIT = "student-rate"
INNOCENT = ("price-list", "desk-voice")

_RATE = re.compile(r"Students pay (\d+) EUR for the annual pass")
_LISTED = re.compile(r"annual pass (\d+) EUR; students (\d+)% off")


def model(request: LLMRequest) -> Reply:
    """Greet a first message; then price the pass: a student rule beats the list."""
    asks = [m.content for m in request.messages if m.role == "user"]
    if "annual pass" not in asks[-1]:
        return "Welcome! How can I help?"
    listed = _LISTED.search(request.system)
    rate = _RATE.search(request.system)
    if rate is not None:
        return f"The annual pass costs {rate.group(1)} EUR for you."
    if listed is None:
        return "I have no price for the annual pass."
    full, off = int(listed.group(1)), int(listed.group(2))
    student = any("student" in a for a in asks[:-1])
    return f"The annual pass costs {full * (100 - off) // 100 if student else full} EUR for you."


def _a_student_spoke(ctx: InjectionContext) -> bool:
    return any(m.role == "user" and "student" in m.content for m in ctx.history)


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The gym desk with the planted student rule (active once a student has spoken)."""
    return Agent(
        provider=FunctionModel(model, name="planted-gym"), model="desk-small",
        system_prompt="You answer members of the Riverside gym.",
        injections=[
            define_steering("desk-voice", "Answer in one friendly sentence."),
            define_fact("price-list", "Prices (current): annual pass 120 EUR; students 20% "
                        "off with a valid card."),
            define_instruction(CULPRIT, "Students pay 60 EUR for the annual pass "
                               "(rate of 2024).", active_when=_a_student_spoke),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-user-gated-rule")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: the customer says who they are, then asks the price."""
    agent.run_sync(FIRST)
    return agent.follow_up_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
