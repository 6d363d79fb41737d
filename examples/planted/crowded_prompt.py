"""Planted bug — a crowded prompt: 120 injections, one stale cut-off note among them.

A dispatch assistant answers "until when can I order for same-day shipping?".
Its prompt carries 118 warehouse aisle notes, the current dispatch rule
("orders placed before 14:00 ship the same day") and a stale note from the old
carrier contract ("cut-off moved: now 11:30"). The model trusts "now".

* Culprit: the fact ``carrier-note``; without it the answer is 14:00.
* Decoys: ``dispatch-rule`` (true) and ``aisle-000`` … ``aisle-117``.

The example the budget is measured on: with ``--budget 100`` the screens isolate
the note within the first re-runs and its confirming test runs at once, before
the 119 innocents are each screened alone.

Record a run, then explain it::

    python examples/planted/crowded_prompt.py
    footprint why last --agent examples/planted/crowded_prompt.py:make_agent
"""

from __future__ import annotations

import re

from footprint import Agent, EventSink, FunctionModel, RunResult, StepClock, define_fact
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply

__all__ = ["AISLES", "CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent",
           "model"]

MESSAGE = "Until what time can I order today and still get same-day shipping?"
CULPRIT = "carrier-note"
AISLES = 118
INNOCENT = ("dispatch-rule", *(f"aisle-{i:03d}" for i in range(AISLES)))

_NOW = re.compile(r"cut-off moved: now (\d\d:\d\d)")
_RULE = re.compile(r"placed before (\d\d:\d\d) ship the same day")


def model(request: LLMRequest) -> Reply:
    """The newest-sounding cut-off wins; the aisle notes never matter."""
    cutoff = (_NOW.findall(request.system) or _RULE.findall(request.system) or ["unknown"])[-1]
    return f"Order before {cutoff} for same-day shipping."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The dispatch assistant with its crowded prompt."""
    return Agent(
        provider=FunctionModel(model, name="planted-dispatch"), model="dispatch-small",
        system_prompt="You answer shipping questions for the warehouse.",
        injections=[
            *(define_fact(f"aisle-{i:03d}",
                          f"Aisle {i} holds {('cables', 'lamps', 'chairs', 'mugs')[i % 4]} "
                          f"on {1 + i % 5} shelves.")
              for i in range(AISLES)),
            define_fact("dispatch-rule",
                        "Dispatch rule: orders placed before 14:00 ship the same day."),
            define_fact(CULPRIT, "Carrier contract 2021: cut-off moved: now 11:30."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-crowded-prompt")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
