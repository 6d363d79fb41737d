"""Planted bug — a retrieved document contradicting an instruction: an old FAQ beats the policy.

The shop's instruction says returns are accepted for 30 days. The retriever
also serves ``returns-faq-2021``, an old FAQ page saying 14 days, and the
model trusts the retrieved document over the instruction (a retrieved text
reads as evidence; the instruction as a default).

* Culprit: the retrieved document ``returns-faq-2021`` (without it: "within
  30 days").
* Decoys: the instruction ``returns-policy`` is the true rule and shares
  the answer's words; removing it changes nothing (the FAQ still wins).
  ``kettle-faq`` is another retrieved page about the same kettle;
  ``desk-voice`` is style only.

Record a run, then explain it::

    python examples/planted/rag_vs_instruction.py
    footprint why last --agent examples/planted/rag_vs_instruction.py:make_agent
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
    define_instruction,
    define_steering,
)
from footprint.agent import Clock
from footprint.injection import Injection
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "How long do I have to return my K2 kettle?"
CULPRIT = "returns-faq-2021"
INNOCENT = ("returns-policy", "kettle-faq", "desk-voice")

_DAYS = re.compile(r"\breturn\w*\b[^.]*?\bwithin (\d+) days", re.IGNORECASE)


def model(request: LLMRequest) -> Reply:
    """A retrieved page's return window wins over the instructions' (read paragraph-wise)."""
    retrieved = [p for p in request.system.split("\n\n") if p.startswith("FAQ")]
    for paragraph in (*retrieved, request.system):
        days = _DAYS.search(paragraph)
        if days is not None:
            return f"You can return the K2 kettle within {days.group(1)} days of delivery."
    return "You can return the K2 kettle; ask the desk for the window."


def _about_returns(ctx: InjectionContext) -> bool:
    return "return" in ctx.user_message.lower()


def _page(page_id: str, text: str) -> Injection:
    return define_injection(page_id, "rag", Rule(active_when=_about_returns),
                            system_prompt=text, description=f"retrieved page {page_id}")


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shop's desk with its returns instruction and two retrieved FAQ pages."""
    return Agent(
        provider=FunctionModel(model, name="planted-returns"), model="desk-small",
        system_prompt="You answer customers of the Brew & Bean shop.",
        injections=[
            define_steering("desk-voice", "Answer in one sentence and name the product."),
            define_instruction("returns-policy", "Customers may return any product within "
                               "30 days of delivery for a full refund."),
            _page("kettle-faq", "FAQ (kettles): the K2 kettle boils 1.7 litres; descale it "
                  "every month."),
            _page(CULPRIT, "FAQ (returns, 2021): items can be returned within 14 days of "
                  "delivery."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-rag-vs-instruction")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
