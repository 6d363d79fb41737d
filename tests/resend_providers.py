"""Providers for ``footprint why --resend --provider tests/resend_providers.py:FACTORY``.

Each factory returns a planted example's own ``FunctionModel`` (the model the
run was recorded with), one that announces every call on stderr (so a test
can see the plan printed before the first call), or one that always fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if str(Path(__file__).parent) not in sys.path:  # loaded by path from the CLI, as a user does
    sys.path.append(str(Path(__file__).parent))

from planted_support import load

from footprint import FunctionModel
from footprint.providers import LLMRequest, Reply, ToolCall

__all__ = ["announcing_wrong_fact", "down", "planted", "refund_desk", "wrong_fact"]


def planted(name: str) -> FunctionModel:
    """The planted example ``name``'s own model."""
    return FunctionModel(load(name).model, name=f"planted-{name}")


def wrong_fact() -> FunctionModel:
    """The wrong-fact example's model."""
    return planted("wrong_fact")


def announcing_wrong_fact() -> FunctionModel:
    """The wrong-fact example's model, writing ``resend-call`` to stderr on each call."""
    inner = load("wrong_fact").model

    def model(request: LLMRequest) -> Reply:
        print("resend-call", file=sys.stderr, flush=True)
        reply: Reply = inner(request)
        return reply

    return FunctionModel(model, name="announcing")


def down() -> FunctionModel:
    """A provider whose every call fails, as a server that refuses connections does."""

    def model(request: LLMRequest) -> Reply:
        raise ConnectionError("connection refused by 127.0.0.1:9")

    return FunctionModel(model, name="down")


_WINDOW = re.compile(r"Refund window: (\d+) days")
_ORDER = re.compile(r"order_id\W+([A-Z]-\d+)")
_DAYS = re.compile(r"delivered_days_ago\W+(\d+)")
DEFAULT_WINDOW = 30


def refund_desk() -> FunctionModel:
    """The refund desk of ``tests/foreign_agents.py`` as a model that reads its request: it
    looks the order up, then approves inside the refund window its instructions, the user's
    message or a tool result state (30 days when they state none)."""

    def model(request: LLMRequest) -> Reply:
        results = [m.content for m in request.messages if m.role == "tool"]
        if not results:
            return ToolCall(id="call_resend", name="lookup_order",
                            arguments={"order_id": "A-1047"})
        told = "\n".join([request.system, *(m.content for m in request.messages
                                            if m.role in ("user", "tool"))])
        window = _WINDOW.search(told)
        days = int(w) if (w := (window.group(1) if window else None)) else DEFAULT_WINDOW
        looked = next((r for r in reversed(results) if _DAYS.search(r)), results[-1])
        order, age = _ORDER.search(looked), _DAYS.search(looked)
        if order is None or age is None:
            return "I could not read the order."
        if int(age.group(1)) <= days:
            return f"APPROVED: order {order.group(1)} is inside the {days}-day window."
        return f"DECLINED: order {order.group(1)} is outside the {days}-day window."

    return FunctionModel(model, name="refund-desk")
