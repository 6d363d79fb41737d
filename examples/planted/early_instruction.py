"""Planted bug — an early instruction misleads the first tool pick: stock from a stale snapshot.

The instruction ``snapshot-first`` is active only while no tool has run
(iteration 1): "call stock_snapshot first". The model follows it, gets the
nightly snapshot (0 units), and answers from that result at iteration 2 —
where the instruction is no longer in the prompt. The answer's proximate
source is the ``stock_snapshot`` result; its root is the instruction.

* Culprit: the instruction ``snapshot-first`` (in the prompt of ``llm#1``
  only). Without it the model picks ``stock_live`` and answers "SKU-42: 7
  units in stock."
* Decoys: ``stock-wording`` shares most words with the answer ("SKU … units
  in stock … out of stock"); ``be-brief`` is style only.
* On the causal path but not the bug: the ``stock_snapshot`` call and result.

Record a run, then explain it::

    python examples/planted/early_instruction.py
    footprint why last --agent examples/planted/early_instruction.py:make_agent
"""

from __future__ import annotations

import json
import re

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    InjectionContext,
    RunResult,
    StepClock,
    define_fact,
    define_instruction,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "Do you have SKU-42 in stock right now?"
CULPRIT = "snapshot-first"
INNOCENT = ("stock-wording", "be-brief")

_SKU = re.compile(r"\bSKU-\d+\b")


def stock_live(sku: str) -> str:
    """Current stock level of a SKU, live from the warehouse system."""
    return json.dumps({"sku": sku, "units": 7, "source": "warehouse, live"})


def stock_snapshot(sku: str) -> str:
    """Nightly stock snapshot of a SKU (can be a day old)."""
    return json.dumps({"sku": sku, "units": 0, "source": "snapshot of last night"})


def _first_pick(request: LLMRequest) -> str:
    """A tool the prompt tells the model to call, else the one that is live."""
    named = [t.name for t in request.tools if re.search(rf"call {t.name}\b", request.system)]
    if named:
        return named[0]
    return next(t.name for t in request.tools if "live" in t.description.lower())


def model(request: LLMRequest) -> Reply:
    """One stock tool call, then answer from whichever result came back."""
    question = next(m.content for m in request.messages if m.role == "user")
    sku = _SKU.search(question)
    if sku is None:
        return "Which SKU?"
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:
        return call(_first_pick(request), sku=sku.group(0))
    units = int(json.loads(results[-1])["units"])
    if units == 0:
        return f"{sku.group(0)}: out of stock (0 units)."
    return f"{sku.group(0)}: {units} units in stock."


def _nothing_run_yet(ctx: InjectionContext) -> bool:
    return not ctx.tool_results


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The stock desk with the planted first-step instruction."""
    return Agent(
        provider=FunctionModel(model, name="planted-stock"), model="stock-small",
        system_prompt="You answer stock questions for the Brew & Bean warehouse.",
        injections=[
            define_steering("be-brief", "One line per answer."),
            define_fact("stock-wording", "Stock answers name the SKU and the units in stock; "
                        "at 0 units say out of stock."),
            define_instruction(CULPRIT, "Before anything else, call stock_snapshot first.",
                               active_when=_nothing_run_yet),
        ],
        tools=[stock_live, stock_snapshot],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-early-instruction")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
