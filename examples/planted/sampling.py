"""Planted trap — a sampling model: the answer is a coin flip, so no piece can be a cause.

The model samples its verdict at temperature 1.0: "NO" with probability
``p`` (default 0.5), else "YES", from its own seeded RNG, whatever the
prompt says. Re-running the unchanged agent gives different answers, so an
honest ``why`` calls every verdict ``inconclusive`` (the baseline does not
reproduce) and confirms nothing.

* Culprit: none. Every piece (``release-notes``, ``qa-status``, ``pm-voice``)
  is innocent; ``why`` must not confirm any of them.
* ``make_agent(p=0.1)`` is the rarely flipping model the false-cause
  benchmark also uses.

Record a run, then explain it::

    python examples/planted/sampling.py
    footprint why last --agent examples/planted/sampling.py:make_agent
"""

from __future__ import annotations

import random
from collections.abc import Callable

from footprint import (
    Agent,
    ConfigError,
    EventSink,
    FunctionModel,
    RunResult,
    StepClock,
    define_fact,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply

__all__ = ["INNOCENT", "MESSAGE", "YES", "converse", "main", "make_agent", "sampler"]

MESSAGE = "Should we ship the beta on Friday?"
INNOCENT = ("release-notes", "qa-status", "pm-voice")
YES = "YES — ship the beta on Friday."
NO = "NO — hold the beta until Monday."


def sampler(rng: random.Random, p: float) -> Callable[[LLMRequest], Reply]:
    """A model answering NO with probability ``p`` when sampled (temperature > 0)."""
    if not 0.0 <= p <= 1.0:
        raise ConfigError(f"sampler p={p!r} is not a probability; pass 0 <= p <= 1")

    def model(request: LLMRequest) -> Reply:
        if not request.temperature:
            return YES
        return NO if rng.random() < p else YES

    return model


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None, p: float = 0.5) -> Agent:
    """The release assistant on a sampling model (its RNG seeded by ``seed``)."""
    return Agent(
        provider=FunctionModel(sampler(random.Random(seed), p), name="planted-sampler"),
        model="release-sampled", temperature=1.0,
        system_prompt="You advise the release manager.",
        injections=[
            define_steering("pm-voice", "Answer YES or NO, then one short reason."),
            define_fact("release-notes", "The beta adds offline sync and a new settings "
                        "page."),
            define_fact("qa-status", "QA: all 212 beta tests pass; no open blockers."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-sampling")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
