"""Planted bug — a wrong RAG chunk: the retriever serves the X1's spec sheet for an X2 question.

Three retrieved chunks land in the system prompt (flavor ``rag``, each
admitted by its retrieval rule). The model reads the first chunk that
states a battery life for the product family ("Aria") and does not notice
that it is the X1's sheet, not the X2's.

* Culprit: the chunk ``chunk-x1-specs`` ("Aria X1 spec sheet: battery 12
  hours"). Without it the answer is "… lasts 30 hours".
* Decoys: ``chunk-x2-faq`` shares nearly every word with the answer ("the
  battery of the Aria X2 headphones … hours") but states a charging time;
  ``chunk-x2-specs`` holds the true figure (without it the X1 chunk still
  wins); the steering ``audio-voice`` is style only.

Record a run, then explain it::

    python examples/planted/wrong_rag_chunk.py
    footprint why last --agent examples/planted/wrong_rag_chunk.py:make_agent
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
    define_injection,
    define_steering,
)
from footprint.agent import Clock
from footprint.injection import Injection
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "How long does the battery of my Aria X2 headphones last on one charge?"
CULPRIT = "chunk-x1-specs"
INNOCENT = ("audio-voice", "chunk-x2-faq", "chunk-x2-specs")

_MODEL = re.compile(r"\bAria (X\d)\b")
_BATTERY = re.compile(r"battery(?: life)?:?\s+(\d+)\s+hours", re.IGNORECASE)


def model(request: LLMRequest) -> Reply:
    """Answer from the first paragraph of the prompt that states an Aria battery life."""
    question = next(m.content for m in request.messages if m.role == "user")
    asked = _MODEL.search(question)
    name = f"Aria {asked.group(1)}" if asked else "Aria"
    for paragraph in request.system.split("\n\n"):
        hours = _BATTERY.search(paragraph)
        if hours is not None and "Aria" in paragraph:
            return f"The battery of the {name} headphones lasts {hours.group(1)} hours."
    return f"I could not find the battery life of the {name} headphones."


def _about_aria(ctx: InjectionContext) -> bool:
    return "aria" in ctx.user_message.lower()


def _chunk(chunk_id: str, text: str) -> Injection:
    return define_injection(chunk_id, "rag", Rule(active_when=_about_aria), system_prompt=text,
                            description=f"retrieved for an Aria question: {chunk_id}")


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The audio shop's assistant with three retrieved chunks, one of the wrong product."""
    return Agent(
        provider=FunctionModel(model, name="planted-audio"), model="audio-small",
        system_prompt="You answer questions about Aria headphones from the retrieved manuals.",
        injections=[
            define_steering("audio-voice", "Answer in one sentence; name the headphones model."),
            _chunk("chunk-x2-faq", "Aria X2 headphones FAQ: the battery of the Aria X2 "
                   "headphones charges fully in 2 hours over USB-C."),
            _chunk(CULPRIT, "Aria X1 spec sheet: battery 12 hours, Bluetooth 5.0."),
            _chunk("chunk-x2-specs", "Aria X2 spec sheet: battery life 30 hours with noise "
                   "cancelling on, Bluetooth 5.3."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-wrong-rag-chunk")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
