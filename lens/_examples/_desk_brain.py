"""The support desk's model: a deterministic function of the request it receives.

It behaves like a plain (and gullible) support model, decided only by what
is in its context: the user message, the tools it is offered, the tool
results so far, and the refund windows written in the system prompt. When
the prompt states several refund windows it trusts the most generous one,
so an outdated fact in the prompt is enough to approve a late refund.
Every final answer names the model that wrote it (``request.model``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from footprint.providers import LLMRequest, Reply, ToolCall, call

__all__ = ["ESCALATION_SKILL", "Transcript", "desk_brain", "refund_windows"]

ESCALATION_SKILL = "escalation"
"""The skill an angry customer's model asks for (read_skill) to reach a human."""

_ORDER_ID = re.compile(r"\b[A-Z]-\d{4}\b")
_WINDOW = re.compile(
    r"(\d+)[- ]day refund window|refund window\W{0,3}(?:is\W{1,3})?(\d+) days", re.IGNORECASE
)
_ANGRY = re.compile(r"\b(angry|furious|outraged)\b", re.IGNORECASE)
_ACKNOWLEDGE = "acknowledge"
_DECODER = json.JSONDecoder()


def refund_windows(system_prompt: str) -> tuple[int, ...]:
    """Every refund window (in days) the system prompt states, in order."""
    return tuple(int(a or b) for a, b in _WINDOW.findall(system_prompt))


@dataclass(frozen=True, slots=True, kw_only=True)
class Transcript:
    """What the model reads off one request."""

    model: str
    system: str
    user: str
    offered: frozenset[str]
    called: tuple[ToolCall, ...]
    results: dict[str, str]

    @classmethod
    def of(cls, request: LLMRequest) -> Transcript:
        user = next((m.content for m in request.messages if m.role == "user"), "")
        called = tuple(c for m in request.messages if m.role == "assistant" for c in m.tool_calls)
        results = {m.tool_name: m.content for m in request.messages
                   if m.role == "tool" and m.tool_name is not None}
        return cls(model=request.model, system=request.system, user=user,
                   offered=frozenset(t.name for t in request.tools), called=called,
                   results=results)

    def calls_to(self, name: str) -> int:
        return sum(1 for c in self.called if c.name == name)

    def result(self, name: str) -> dict[str, object]:
        """A tool's last result as JSON (empty when absent or not JSON).

        The host may append a note after the JSON (a stepped skill's next
        step), so only the leading JSON value is read.
        """
        try:
            value, _ = _DECODER.raw_decode(self.results.get(name, "").lstrip())
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def angry(self) -> bool:
        return _ANGRY.search(self.user) is not None

    @property
    def order_id(self) -> str | None:
        hit = _ORDER_ID.search(self.user)
        return hit.group(0) if hit else None

    @property
    def decided(self) -> bool:
        return "issue_refund" in self.results or "skip_step" in self.results


def desk_brain(request: LLMRequest) -> Reply:
    """One reply: the next tool call the context asks for, else the final answer."""
    t = Transcript.of(request)
    if not t.offered:
        return final_answer(t)
    if t.angry and "read_skill" in t.offered and t.calls_to("read_skill") == int(t.decided):
        return call("read_skill", id=ESCALATION_SKILL)  # asks for a human, again once decided
    order = t.order_id
    if order is None:
        return final_answer(t)
    for name in ("lookup_order", "check_eligibility"):
        if name in t.offered and t.calls_to(name) == 0:
            return call(name, order_id=order)
    if "check_eligibility" in t.results and not t.decided:
        return _decide(t, order)
    return final_answer(t)


def _age(t: Transcript) -> int | None:
    days = t.result("check_eligibility").get("days_since_delivery")
    return days if isinstance(days, int) else None


def _decide(t: Transcript, order: str) -> Reply:
    """Step 2 of the refund procedure: issue the refund, or skip it with the reason."""
    windows, age = refund_windows(t.system), _age(t)
    if age is not None and windows and age <= max(windows):
        amount = t.result("lookup_order").get("amount", 0)
        return call("issue_refund", order_id=order, amount=amount)
    limit = f"the {max(windows)}-day refund window" if windows else "no refund window on file"
    return call("skip_step", reason=f"order {order} is {age} days old; {limit}")


def final_answer(t: Transcript) -> str:
    """APPROVED or DECLINED with the reason, signed by the model that wrote it."""
    order = t.order_id
    if order is None:
        return f"Which order is this about? Please send the order id. [{t.model}]"
    windows, age = refund_windows(t.system), _age(t)
    window = f"{max(windows)}-day refund window" if windows else "refund window"
    if "issue_refund" in t.results:
        amount = t.result("issue_refund").get("refunded", 0)
        verdict = (f"APPROVED: order {order} is {age} days old, within the {window}; "
                   f"a refund of ${amount} is on its way.")
    elif age is not None:
        verdict = f"DECLINED: order {order} is {age} days old, outside the {window}."
    else:
        verdict = f"DECLINED: order {order} could not be checked for a refund."
    sorry = " I am sorry for the trouble." if _ACKNOWLEDGE in t.system.lower() else ""
    return f"{verdict}{sorry} [{t.model}]"
