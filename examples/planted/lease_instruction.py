"""Planted bug — a lease keeping an instruction alive: an expired voucher still discounts the total.

The tool ``apply_voucher`` finds voucher VX-10 expired, yet returns a
``require-instruction`` effect pushing the instruction ``voucher-discount``
with ``delivery_lease="until-skill-exit"``. The instruction's own rule (a
valid voucher among the tool results) never holds; only the lease keeps it
in the prompt, call after call, until the final answer takes 10% off.

* Culprit: the instruction ``voucher-discount``, admitted by the lease the
  ``apply_voucher`` result granted. Without it the lease is refused
  (unknown id) and the answer is "Cart C-5 total: 80.00 EUR."
* Decoys: ``voucher-terms`` shares the answer's topic and words ("voucher …
  expired … discount"); ``totals`` shares "cart total EUR".
* On the causal path but not the bug: the ``apply_voucher`` call that granted
  the lease, and the ``cart_total`` result the answer quotes.

Record a run, then explain it::

    python examples/planted/lease_instruction.py
    footprint why last --agent examples/planted/lease_instruction.py:make_agent
"""

from __future__ import annotations

import json
import re
from typing import Any

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

MESSAGE = "Use my voucher VX-10 and tell me the total for cart C-5."
CULPRIT = "voucher-discount"
INNOCENT = ("voucher-terms", "totals")

_VOUCHER = re.compile(r"\bVX-\d+\b")
_CART = re.compile(r"\bC-\d+\b")
_DISCOUNT = re.compile(r"take (\d+)% off")


def apply_voucher(code: str) -> dict[str, Any]:
    """Check a voucher code and apply it to the customer's next totals."""
    return {
        "content": json.dumps({"code": code, "valid": False, "reason": "expired 2024-01-31"}),
        "status": "success",
        # the planted bug: the discount is pushed whatever the check found, and for good
        "effects": [{"kind": "require-instruction", "instruction_id": CULPRIT,
                     "delivery_lease": "until-skill-exit"}],
    }


def cart_total(cart: str) -> str:
    """The total of a shopping cart in EUR, before vouchers."""
    return json.dumps({"cart": cart, "total_eur": 80.0})


def _results(request: LLMRequest, tool_name: str) -> list[str]:
    return [m.content for m in request.messages if m.role == "tool" and m.tool_name == tool_name]


def model(request: LLMRequest) -> Reply:
    """Apply the voucher, fetch the total, then answer, taking off any discount the prompt says."""
    question = next(m.content for m in request.messages if m.role == "user")
    voucher, cart = _VOUCHER.search(question), _CART.search(question)
    if voucher is not None and not _results(request, "apply_voucher"):
        return call("apply_voucher", code=voucher.group(0))
    if cart is None:
        return "Which cart?"
    totals = _results(request, "cart_total")
    if not totals:
        return call("cart_total", cart=cart.group(0))
    total = float(json.loads(totals[-1])["total_eur"])
    discount = _DISCOUNT.search(request.system)
    if discount is not None:
        total *= 1 - int(discount.group(1)) / 100
    return f"Cart {cart.group(0)} total: {total:.2f} EUR."


def _valid_voucher(ctx: InjectionContext) -> bool:
    return any('"valid": true' in r.result for r in ctx.tool_results or ())


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The checkout assistant whose voucher tool pushes a discount for good."""
    return Agent(
        provider=FunctionModel(model, name="planted-checkout"), model="checkout-small",
        system_prompt="You are the checkout assistant of the Brew & Bean web shop.",
        injections=[
            define_steering("totals", "Quote cart totals in EUR with two decimals."),
            define_fact("voucher-terms", "Voucher terms: a voucher is single-use; an expired "
                        "voucher gives no discount on the cart total."),
            define_instruction(CULPRIT, "Voucher VX-10 applies: take 10% off every total you "
                               "quote.", active_when=_valid_voucher),
        ],
        tools=[apply_voucher, cart_total],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-lease-instruction")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one request."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
