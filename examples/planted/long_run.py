"""Planted bug — a long run: 30 ledger pages, 31 model calls, and an outdated fee memo.

The model reads the customer's ledger one page per call (``ledger_page``,
30 calls), counts the late fees, and prices them. Two facts state the fee:
the current schedule (10 EUR) and a 2019 memo ("now 12 EUR"); the model
trusts "now". Ten branch notes ride along in every prompt.

* Culprit: the fact ``fee-memo``. The 30 ``ledger_page`` results are one
  removal (one suspect listing the 30 calls); dropping the tool loses the
  answer ("Sorry, I cannot read …"), so it is ``necessary``, never the
  headline.
* Decoys: ``fee-schedule`` (true), ``branch-0`` … ``branch-9``.

Record a run, then explain it::

    python examples/planted/long_run.py
    footprint why last --agent examples/planted/long_run.py:make_agent
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
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "PAGES", "converse", "main", "make_agent", "model"]

MESSAGE = "How much do I owe in late fees across my ledger?"
CULPRIT = "fee-memo"
PAGES = 30
INNOCENT = ("fee-schedule", *(f"branch-{i}" for i in range(10)))

_NOW = re.compile(r"late fee now (\d+) EUR")
_FEE = re.compile(r"late fee is (\d+) EUR")


def ledger_page(n: int) -> str:
    """One page of the customer's ledger."""
    return json.dumps({"page": n, "late": 1 if n % 3 == 0 else 0})


def model(request: LLMRequest) -> Reply:
    """Read every page, count late entries, price them by the newest-sounding fee."""
    pages = [json.loads(m.content) for m in request.messages if m.role == "tool"]
    if len(pages) < PAGES:
        if "ledger_page" not in {t.name for t in request.tools}:
            return "Sorry, I cannot read your ledger right now."
        return call("ledger_page", n=len(pages))
    late = sum(p["late"] for p in pages)
    fee = int((_NOW.findall(request.system) or _FEE.findall(request.system) or ["0"])[-1])
    return f"You have {late} late fees of {fee} EUR: {late * fee} EUR in total."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The billing assistant on a long ledger."""
    return Agent(
        provider=FunctionModel(model, name="planted-ledger"), model="billing-small",
        system_prompt="You answer billing questions; read the whole ledger first.",
        injections=[
            *(define_fact(f"branch-{i}", f"Branch {i} opens at {8 + i % 3}:00 on weekdays.")
              for i in range(10)),
            define_fact("fee-schedule", "Fee schedule: the late fee is 10 EUR per entry."),
            define_fact(CULPRIT, "Memo (2019): late fee now 12 EUR."),
        ],
        tools=[ledger_page], max_iterations=PAGES + 3,
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-long-run")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
