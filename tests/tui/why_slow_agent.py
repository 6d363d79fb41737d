"""A slow planted agent for the lens's causal-search tests: ``why_slow_agent:make_agent``.

The wrong-fact shop (``examples/planted/wrong_fact.py``) whose model takes
``DELAY_S`` per call and counts its calls in ``CALLS``, so a test can cancel
a search while it runs and see that no re-run starts after the cancel.
"""

from __future__ import annotations

import time
from typing import Any

from planted_support import load

from footprint import Agent, FunctionModel
from footprint.providers import LLMRequest, Reply

DELAY_S = 0.05
CALLS: list[float] = []


def _slow(request: LLMRequest) -> Reply:
    CALLS.append(time.monotonic())
    time.sleep(DELAY_S)
    reply: Reply = load("wrong_fact").model(request)
    return reply


def make_agent(**options: Any) -> Agent:
    """The wrong-fact shop with the slow, counting model."""
    agent: Agent = load("wrong_fact").make_agent(**options)
    return agent.variant(provider=FunctionModel(_slow, name="planted-shop"))
