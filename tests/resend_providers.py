"""Providers for ``footprint why --resend --provider tests/resend_providers.py:FACTORY``.

Each factory returns a planted example's own ``FunctionModel`` (the model the
run was recorded with), one that announces every call on stderr (so a test
can see the plan printed before the first call), or one that always fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).parent) not in sys.path:  # loaded by path from the CLI, as a user does
    sys.path.append(str(Path(__file__).parent))

from planted_support import load

from footprint import FunctionModel
from footprint.providers import LLMRequest, Reply

__all__ = ["announcing_wrong_fact", "down", "planted", "wrong_fact"]


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
