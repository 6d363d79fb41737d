"""Planted bug — a model whose wording varies by seed while the fact it states does not.

The model phrases its answer one of four ways, drawn from the run's seed
(``request.seed``: every ``why`` re-run runs on a seed of its own), and
writes the time as "1 pm", "13:00" or "1:00 PM". The time itself comes
from the prompt: a stale room memo moved the review to 13:00; the
calendar says 11:00.

* Culprit: the fact ``room-memo``. The baseline's answers differ in
  wording only, so ``why`` compares them by facts (and says so), searches,
  and confirms the memo: 13:00 → 11:00.
* Decoys: ``team-voice`` and ``agenda``; ``calendar`` is true.

Record a run, then explain it::

    python examples/planted/seed_wording.py
    footprint why last --agent examples/planted/seed_wording.py:make_agent
"""

from __future__ import annotations

import random
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

MESSAGE = "When is the design review on Thursday?"
CULPRIT = "room-memo"
INNOCENT = ("team-voice", "agenda", "calendar")

_MOVED = re.compile(r"moved to (\d{1,2}):00")
_BOOKED = re.compile(r"design review at (\d{1,2}):00")
_PHRASES = ("The design review is on Thursday at {h12}.",
            "Thursday's design review starts at {h24}.",
            "On Thursday, the design review begins at {h12b}.",
            "Design review: Thursday, {h24}.")


def model(request: LLMRequest) -> Reply:
    """State the prompt's time in a phrasing drawn from the run's seed."""
    hour = int((_MOVED.findall(request.system) or _BOOKED.findall(request.system)
                or ["9"])[-1])
    h12 = f"{(hour - 1) % 12 + 1} {'pm' if hour >= 12 else 'am'}"
    h12b = f"{(hour - 1) % 12 + 1}:00 {'PM' if hour >= 12 else 'AM'}"
    phrase = random.Random(request.seed).choice(_PHRASES)
    return phrase.format(h12=h12, h12b=h12b, h24=f"{hour}:00")


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The team assistant on a model whose phrasing is drawn from the run's ``seed``."""
    return Agent(
        provider=FunctionModel(model, name="planted-phrasing"),
        model="team-small",
        system_prompt="You answer questions about the team's meetings.",
        injections=[
            define_steering("team-voice", "Answer with the day and the time of the meeting."),
            define_fact("agenda", "Thursday's design review covers the new onboarding flow."),
            define_fact("calendar", "Calendar: design review at 11:00 on Thursday."),
            define_fact(CULPRIT, "Room memo (last quarter): the design review moved to 13:00."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-seed-wording")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
