"""Planted bug — a cause in a stepped skill's second step: a 2022 handling fee.

The skill ``parcel-desk`` runs a two-step procedure: ``weigh_parcel``, then
``price_parcel``. A fee memo from 2022 is injected only while the procedure
stands at step 2 (a rule on the step pointer), so it reaches one model call:
the one that prices the parcel. The model takes the memo's fee (7 EUR) over
the current table's (4 EUR) and passes it to ``price_parcel``.

* Culprit: the fact ``fee-memo-2022`` (without it: 10 EUR). Its chain lands
  at the step-2 call only; the path shows the call's argument.
* Decoys: ``fee-table`` holds the true fee and shares the answer's words;
  ``desk-voice`` is style only. The skill itself is needed (without it no
  tool runs), not a cause of the value.

Record a run, then explain it::

    python examples/planted/stepped_fee.py
    footprint why last --agent examples/planted/stepped_fee.py:make_agent
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
    define_skill,
    define_steering,
    tool,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply, call

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "What does shipping parcel P-3 cost?"
CULPRIT = "fee-memo-2022"
INNOCENT = ("fee-table", "desk-voice")

_PARCEL = re.compile(r"\bP-\d+\b")
_FEE = re.compile(r"Handling fee[^:]*: (\d+) EUR")


def weigh_parcel(parcel_id: str) -> str:
    """Weigh a parcel (kg)."""
    return json.dumps({"parcel_id": parcel_id, "kg": 2})


def price_parcel(parcel_id: str, kg: float, fee: float) -> str:
    """Price a parcel: 3 EUR per kg plus the handling fee."""
    return json.dumps({"parcel_id": parcel_id, "total": 3 * kg + fee, "currency": "EUR"})


def _data(content: str) -> dict[str, object]:
    """A tool result's JSON object (a step banner may follow it); ``{}`` for plain text."""
    if not content.startswith("{"):
        return {}
    data, _ = json.JSONDecoder().raw_decode(content)
    return dict(data)


def model(request: LLMRequest) -> Reply:
    """Read the skill, run each step's tool as it is offered, then say the total."""
    question = next(m.content for m in request.messages if m.role == "user")
    parcel = _PARCEL.search(question)
    if parcel is None:
        return "Which parcel?"
    done = {m.tool_name: _data(m.content) for m in request.messages
            if m.role == "tool" and m.tool_name is not None}
    offered = {t.name for t in request.tools}
    if "read_skill" not in done and "read_skill" in offered:
        return call("read_skill", id="parcel-desk")
    if "weigh_parcel" in offered and "weigh_parcel" not in done:
        return call("weigh_parcel", parcel_id=parcel.group(0))
    if "price_parcel" in offered and "price_parcel" not in done:
        fees = _FEE.findall(request.system)
        return call("price_parcel", parcel_id=parcel.group(0), kg=done["weigh_parcel"]["kg"],
                    fee=int(fees[-1]) if fees else 0)
    if "price_parcel" not in done:
        return f"I could not price parcel {parcel.group(0)}."
    return f"Shipping parcel {parcel.group(0)} costs {done['price_parcel']['total']:g} EUR."


def _at_step_2(ctx: InjectionContext) -> bool:
    return ctx.step_pointer is not None and ctx.step_pointer.step == 2


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The parcel desk with its two-step skill and the step-2 fee memo."""
    desk = define_skill("parcel-desk", "Price a parcel's shipping.",
                        "Follow the steps: weigh the parcel, then price it.",
                        tools=[tool(weigh_parcel), tool(price_parcel)],
                        steps=[{"tool": "weigh_parcel", "note": "weigh the parcel"},
                               {"tool": "price_parcel", "note": "price it with the fee"}])
    return Agent(
        provider=FunctionModel(model, name="planted-parcels"), model="desk-small",
        system_prompt="You price parcels for the Brew & Bean shop. Read a skill first.",
        injections=[
            define_steering("desk-voice", "One sentence; name the parcel."),
            define_fact("fee-table", "Handling fee (current): 4 EUR per parcel."),
            desk,
            define_fact(CULPRIT, "Handling fee (memo, 2022): 7 EUR per parcel.",
                        active_when=_at_step_2),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-stepped-fee")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
