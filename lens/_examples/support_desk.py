"""The showcase agent: a customer-support desk on a skill graph, with one planted bug.

Graph: ``triage -> billing -> refund -> escalation``. Keyword entry rules
pick the first skill; ``billing -> refund`` is taken on ``lookup_order``'s
result only when its guard (low risk, small amount) holds; ``refund`` is a
stepped skill (check_eligibility, then issue_refund) served by its own
brain (model ``desk-refunds``); ``refund -> escalation`` is taken when
issue_refund fails. The graph runs on rails: only declared routes move the
cursor, so an angry customer's model asking ``read_skill("escalation")`` is
refused (once unreachable from billing, once by the rails from refund), and
the two refusals hand the turn to the escalation brain (``desk-senior``).

The planted bug: the fact ``legacy-window-fact`` states an outdated 60-day
refund window (the policy is 30 days). The model trusts the most generous
window in its prompt, so the default run approves a refund for a 47-day-old
order. ``make_agent(without=("legacy-window-fact",))`` removes the fact,
and the same run declines it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Literal

from footprint import (
    Agent,
    ConfigError,
    EscalationPolicy,
    EventSink,
    FunctionModel,
    Injection,
    InjectionContext,
    Keywords,
    RunResult,
    SkillGraph,
    SkillStep,
    StepClock,
    define_fact,
    define_instruction,
    define_skill,
    define_steering,
    skill_graph,
    tool,
)
from footprint._errors import did_you_mean
from footprint.agent import Clock, IdSource
from lens._examples._desk_brain import ESCALATION_SKILL, desk_brain

__all__ = [
    "DEFAULT_MESSAGE",
    "DEFAULT_SEED",
    "PLANTED_FACT",
    "REMOVABLE",
    "SupportDesk",
    "main",
    "make_agent",
]

DEFAULT_MESSAGE = (
    "Hi, I was charged $40 for order A-1047 and the kettle arrived broken. "
    "I am angry: I want my money back and I want to talk to a manager."
)
DEFAULT_SEED = 1047
PLANTED_FACT = "legacy-window-fact"
PROVIDER_NAME = "support-desk"
MODEL = "desk-standard"
REFUND_MODEL = "desk-refunds"
SENIOR_MODEL = "desk-senior"

SYSTEM_PROMPT = (
    "You are the support desk of Kettle & Co. Use the tools of the active skill, "
    "decide by the policies stated in this prompt, and answer APPROVED or DECLINED "
    "for refund requests."
)

# ── the shop's data (read-only) ───────────────────────────────────────────

_ORDERS: Mapping[str, Mapping[str, object]] = MappingProxyType({
    "A-1047": MappingProxyType({"order_id": "A-1047", "item": "kettle", "amount": 40,
                                "risk": "low", "days_since_delivery": 47,
                                "condition": "damaged"}),
    "B-2210": MappingProxyType({"order_id": "B-2210", "item": "toaster", "amount": 65,
                                "risk": "low", "days_since_delivery": 12,
                                "condition": "damaged"}),
})


def _order(order_id: str) -> Mapping[str, object]:
    found = _ORDERS.get(order_id)
    if found is None:
        raise ValueError(f"no order {order_id!r}{did_you_mean(order_id, _ORDERS)}")
    return found


# ── tools ──────────────────────────────────────────────────────────────────


def classify_request(topic: Literal["billing", "shipping", "other"]) -> str:
    """Record what the customer's request is about."""
    return json.dumps({"topic": topic})


def lookup_order(order_id: str) -> str:
    """Look up an order: item, amount charged and fraud risk."""
    o = _order(order_id)
    return json.dumps({k: o[k] for k in ("order_id", "item", "amount", "risk")})


def check_eligibility(order_id: str) -> str:
    """Report how many days ago an order was delivered and in what condition."""
    o = _order(order_id)
    return json.dumps({k: o[k] for k in ("order_id", "days_since_delivery", "condition")})


def issue_refund(order_id: str, amount: float) -> str:
    """Refund an amount to the customer's original payment method."""
    _order(order_id)
    return json.dumps({"order_id": order_id, "refunded": amount, "status": "issued"})


def open_ticket(summary: str) -> str:
    """Hand the case to a human supervisor with a one-line summary."""
    return json.dumps({"ticket": "T-" + order_number(summary), "queue": "supervisors"})


def order_number(text: str) -> str:
    """The digits of the text, or ``0000`` when there are none (a stable ticket number)."""
    digits = "".join(ch for ch in text if ch.isdigit())
    return digits[:4] or "0000"


# ── skills and the graph ───────────────────────────────────────────────────


def _skills() -> tuple[Injection, Injection, Injection, Injection]:
    triage = define_skill(
        "triage", "Sort a request that names no topic yet.",
        "Ask what the request is about and record it with classify_request.",
        tools=[tool(classify_request)], auto_activate="currentSkill")
    billing = define_skill(
        "billing", "Charges, invoices and payments.",
        "Look the order up with lookup_order before answering anything about money.",
        tools=[tool(lookup_order)], auto_activate="currentSkill")
    refund = define_skill(
        "refund", "Refund requests for a looked-up order.",
        "Follow the refund procedure step by step. Approve only inside the refund window.",
        tools=[tool(check_eligibility), tool(issue_refund)], auto_activate="currentSkill",
        steps=[SkillStep("check_eligibility", "check the delivery date and condition"),
               SkillStep("issue_refund", "issue the refund, or skip_step with the reason")],
        model=REFUND_MODEL)
    escalation = define_skill(
        ESCALATION_SKILL, "A human supervisor takes the case.",
        "Summarise the case in one line and open a ticket with open_ticket.",
        tools=[tool(open_ticket)], auto_activate="currentSkill")
    return triage, billing, refund, escalation


def build_graph() -> SkillGraph:
    """The desk's skill graph, checked strictly (a check-up error raises)."""
    triage, billing, refund, escalation = _skills()
    return (
        skill_graph(triage, billing, refund, escalation)
        .entry(billing, match=Keywords(("charged", "invoice", "payment", "refund")))
        .entry(triage, match=Keywords(("hello", "question", "help")))
        .route(triage, billing, on_tool_return="classify_request",
               guard={"topic": {"eq": "billing"}})
        .route(billing, refund, on_tool_return="lookup_order",
               guard={"risk": {"eq": "low"}, "amount": {"lte": 100}})
        .route(refund, escalation, on_tool_return="issue_refund", on_tool_status="failure")
        .build(check="throw")
    )


# ── steering, facts, instructions ──────────────────────────────────────────


def _is_angry(ctx: InjectionContext) -> bool:
    return "angry" in ctx.user_message.lower()


def context_injections() -> tuple[Injection, ...]:
    """Everything but the skills; each id may be removed with ``make_agent(without=...)``."""
    return (
        define_steering("tone", "Be brief and concrete. Name the order id in every answer."),
        define_fact("refund-policy", "Refund policy: refunds are allowed inside a 30-day "
                    "refund window from delivery; later requests are declined.",
                    description="the current refund policy"),
        define_fact(PLANTED_FACT, "Refund window: 60 days from delivery (policy memo "
                    "FIN-2019-07).", description="an outdated policy memo"),
        define_fact("shipping-times", "Standard shipping takes 5 business days; express "
                    "takes 2 days.", description="shipping times"),
        define_fact("support-hours", {"hours": "08:00-18:00 CET", "days": "Mon-Fri"},
                    description="when humans staff the desk"),
        define_instruction("calm-angry-customer", "The customer is upset: acknowledge it "
                           "once, briefly, and stay factual.", active_when=_is_angry,
                           description="only when the customer says they are angry"),
    )


REMOVABLE: tuple[str, ...] = tuple(i.id for i in context_injections())
"""The ids ``make_agent(without=...)`` accepts."""


def _kept(without: Iterable[str]) -> tuple[Injection, ...]:
    drop = tuple(without)
    if isinstance(without, str):
        raise ConfigError(f"without={without!r} is one string; pass a tuple of ids, "
                          f"e.g. without=({without!r},)")
    for item in drop:
        if item not in REMOVABLE:
            raise ConfigError(
                f"without names {item!r}, which is not a removable injection of the "
                f"support desk{did_you_mean(str(item), REMOVABLE)}; removable: "
                f"{', '.join(REMOVABLE)}")
    return tuple(i for i in context_injections() if i.id not in drop)


# ── the agent ──────────────────────────────────────────────────────────────


class SupportDesk(Agent):
    """The desk's Agent, remembering the message its default conversation sends."""

    message: str = DEFAULT_MESSAGE

    def answer(self) -> RunResult:
        """Run the default conversation: one turn with ``self.message``."""
        return self.run_sync(self.message)


def make_agent(
    *,
    sink: EventSink | None = None,
    clock: Clock | None = None,
    seed: int = DEFAULT_SEED,
    ids: IdSource | None = None,
    without: Iterable[str] = (),
    message: str = DEFAULT_MESSAGE,
    max_iterations: int = 8,
) -> SupportDesk:
    """The support desk, reproducible by default (``StepClock`` and a fixed seed).

    Run ids stay unique (operating-system randomness) unless ``ids`` says
    otherwise, so two runs recorded into one store never merge.

    ``without`` removes context injections by id (see ``REMOVABLE``);
    ``message`` is what :meth:`SupportDesk.answer` sends.
    """
    model = FunctionModel(desk_brain, name=PROVIDER_NAME)
    agent = SupportDesk(
        provider=model, model=MODEL, system_prompt=SYSTEM_PROMPT,
        injections=_kept(without), graph=build_graph(), posture="rails",
        escalation=EscalationPolicy(provider=model, after_refusals=2, model=SENIOR_MODEL),
        max_iterations=max_iterations, sink=sink,
        clock=clock if clock is not None else StepClock(), seed=seed, ids=ids,
        name="support-desk",
    )
    agent.message = message
    return agent


def main() -> int:
    """Run the default conversation and print the answer."""
    result = make_agent().answer()
    print(result.answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
