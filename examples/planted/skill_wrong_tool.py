"""Planted bug — a skill body naming the wrong tool: invoices converted at a 2019 contract rate.

The model reads the skill ``invoicing`` (``read_skill``) because the request
is about an invoice. The skill's body says to convert with
``fx_rate_fixed`` — the fixed 2019 rate meant for legacy contracts — and the
model does what a skill says, so it quotes 810.00 EUR instead of 920.00 EUR.

* Culprit: the skill ``invoicing`` (an open skill, removable). Without it the
  model picks the tool described as today's rate, ``fx_rate``.
* Decoys: ``invoice-format`` shares the answer's words ("invoice … amount in
  EUR … rate"); ``finance-tone`` is style only.
* On the causal path but not the bug: the ``fx_rate_fixed`` call the skill
  led to (its result resembles the answer most).

Record a run, then explain it::

    python examples/planted/skill_wrong_tool.py
    footprint why last --agent examples/planted/skill_wrong_tool.py:make_agent
"""

from __future__ import annotations

import json
import re

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    RunResult,
    StepClock,
    define_fact,
    define_skill,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "Please convert invoice INV-88 (1000 USD) to EUR for the books."
CULPRIT = "invoicing"
INNOCENT = ("invoice-format", "finance-tone")
ENGINE_TOOLS = frozenset({"read_skill", "list_skills"})

_AMOUNT = re.compile(r"\((\d+) ([A-Z]{3})\)")
_INVOICE = re.compile(r"\bINV-\d+\b")


def fx_rate(base: str, quote: str) -> str:
    """Today's exchange rate between two currencies (market rate)."""
    return json.dumps({"base": base, "quote": quote, "rate": 0.92, "as_of": "today"})


def fx_rate_fixed(base: str, quote: str) -> str:
    """The fixed contract rate of 2019 between two currencies, for legacy contracts only."""
    return json.dumps({"base": base, "quote": quote, "rate": 0.81, "as_of": "2019-01-01"})


def _skill_to_read(request: LLMRequest) -> str | None:
    """An offered skill whose one-line description shares a word with the request."""
    read = [c for m in request.messages if m.role == "assistant" for c in m.tool_calls
            if c.name == "read_skill"]
    spec = next((t for t in request.tools if t.name == "read_skill"), None)
    if spec is None or read:
        return None
    words = set(re.findall(r"[a-z]{5,}", next(
        m.content for m in request.messages if m.role == "user").lower()))
    for line in spec.description.split("Available skills:", 1)[-1].split(";"):
        skill_id, _, about = line.strip().partition(" — ")
        if words & set(re.findall(r"[a-z]{5,}", about.lower())):
            return skill_id
    return None


def _rate_tool(request: LLMRequest) -> str:
    """A tool the prompt names, else the one described as today's rate."""
    offered = [t for t in request.tools if t.name not in ENGINE_TOOLS]
    named = [t.name for t in offered if re.search(rf"\b{t.name}\b", request.system)]
    if named:
        return named[0]
    return next(t.name for t in offered if "today" in t.description.lower())


def model(request: LLMRequest) -> Reply:
    """Read a matching skill first, then call a rate tool once, then answer from its result."""
    question = next(m.content for m in request.messages if m.role == "user")
    skill = _skill_to_read(request)
    if skill is not None:
        return call("read_skill", id=skill)
    amount = _AMOUNT.search(question)
    invoice = _INVOICE.search(question)
    if amount is None or invoice is None:
        return "Which invoice, and what amount?"
    rates = [m.content for m in request.messages if m.role == "tool" and
             m.tool_name and m.tool_name.startswith("fx_rate")]
    if not rates:
        return call(_rate_tool(request), base=amount.group(2), quote="EUR")
    rate = float(json.loads(rates[-1])["rate"])
    total = int(amount.group(1)) * rate
    return f"{invoice.group(0)}: {amount.group(1)} {amount.group(2)} = {total:.2f} EUR."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The bookkeeping assistant with the planted skill."""
    return Agent(
        provider=FunctionModel(model, name="planted-books"), model="books-small",
        system_prompt="You are a bookkeeping assistant. Read a skill before a task it covers.",
        injections=[
            define_steering("finance-tone", "Be exact; never round before the last step."),
            define_fact("invoice-format", "Invoice answers give the invoice id, the amount in "
                        "EUR and the rate used for the invoice."),
            define_skill(CULPRIT, "How to convert and book invoice amounts.",
                         "To convert an invoice amount, call fx_rate_fixed with the invoice "
                         "currency and EUR, then multiply the amount by the rate."),
        ],
        tools=[fx_rate, fx_rate_fixed],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-skill-wrong-tool")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one request."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
