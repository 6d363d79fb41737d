"""Planted bugs — two causes in two turns, jointly needed: a stale plan name and a stale price.

Turn 1: the customer asks which plan they are on; the assistant, reading an
old account note, says "You are on the Pro plan." Turn 2: they ask what the
renewal costs. The model takes the plan from the conversation and the price
from a 2023 renewal memo (Pro renews at 99 EUR). Both are needed for the
recorded 99 EUR: without the turn-1 answer the model prices the plan on the
account (Basic, 49 EUR); without the memo it prices Pro from the list (79 EUR).

* Culprits: the assistant message ``llm#1`` of turn 1 (a history message)
  and the fact ``renewal-memo-2023`` — a conjunction across turns: removing
  either one alone changes the same recorded value (99 EUR).
* Decoys: the fact ``price-list`` shares the answer's words ("renews …
  EUR"), ``desk-voice`` is style only; the turn-1 question is the user's.

Record the conversation (two runs), then explain the second::

    python examples/planted/cross_turn_pair.py
    footprint why last --agent examples/planted/cross_turn_pair.py:make_agent
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
from footprint.injection import InjectionContext
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "CULPRIT_TEXT", "FIRST", "INNOCENT", "MESSAGE", "converse", "main",
           "make_agent", "model"]

FIRST = "Which plan am I on?"
MESSAGE = "What will my renewal cost?"
CULPRIT = "renewal-memo-2023"
CULPRIT_TEXT = "You are on the Pro plan."
"""The turn-1 answer (origin ``llm#1`` of the first run), read from a stale account note."""
INNOCENT = ("price-list", "desk-voice")

_SAID_PLAN = re.compile(r"You are on the (\w+) plan")
_MEMO = re.compile(r"(\w+) renews at (\d+) EUR")
_LIST = re.compile(r"(\w+) (\d+) EUR")


def model(request: LLMRequest) -> Reply:
    """Turn 1 reads the account note; turn 2 takes the plan said before and the memo's price."""
    asks = [m.content for m in request.messages if m.role == "user"]
    if asks[-1] == FIRST:
        note = re.search(r"Account note: plan (\w+)", request.system)
        return f"You are on the {note.group(1) if note else 'Basic'} plan."
    said = [m.content for m in request.messages if m.role == "assistant"]
    plan = next((p.group(1) for t in said if (p := _SAID_PLAN.search(t))), "Basic")
    memo = {m.group(1): m.group(2) for m in _MEMO.finditer(request.system)}
    listed = {m.group(1): m.group(2) for m in _LIST.finditer(request.system)}
    price = memo.get(plan) or listed.get(plan)
    if price is None:
        return f"I have no renewal price for the {plan} plan."
    return f"Your {plan} plan renews at {price} EUR."


def _first_turn(ctx: InjectionContext) -> bool:
    return ctx.user_message == FIRST


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The subscription desk: an old account note in turn 1, a stale renewal memo after."""
    return Agent(
        provider=FunctionModel(model, name="planted-plans"), model="desk-small",
        system_prompt="You answer subscribers of the Brew Club.",
        injections=[
            define_steering("desk-voice", "One short sentence."),
            define_fact("account-note", "Account note: plan Pro (2023).",
                        active_when=_first_turn),
            define_fact("price-list", "Renewal prices (current): Basic 49 EUR; Pro 79 EUR."),
            define_fact(CULPRIT, "Memo (2023): Pro renews at 99 EUR."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-cross-turn-pair")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: the plan question, then the renewal question."""
    agent.run_sync(FIRST)
    return agent.follow_up_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
