"""Small offline agents with one planted cause each, for the why engine's tests.

Each model reads its request the way a model would: the deciding text is
usually *not* the piece sharing most words with the answer.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from footprint import Agent, FunctionModel, define_fact, define_instruction, tool
from footprint.agent import StepClock
from footprint.events import EventSink
from footprint.injection import Always, define_injection
from footprint.providers import LLMRequest, Reply, ToolCall

DECOYS = (
    define_fact("grinder-specs", "The grinder is a conical burr grinder with 40 settings."),
    define_fact("grinder-colour", "The grinder comes in matte black and steel."),
    define_fact("shipping", "The grinder ships in 2 days with tracked delivery."),
    define_fact("warranty", "The grinder has a 2-year warranty."),
    define_fact("returns", "Returns of the grinder are free within 14 days."),
    define_fact("stock", "The grinder is in stock in the Berlin warehouse."),
)


def _said(request: LLMRequest) -> str:
    return request.system + " " + " ".join(m.content for m in request.messages)


def _agent(fn: Callable[[LLMRequest], Reply], *, sink: EventSink | None, seed: int,
           **kw: Any) -> Agent:
    kw.setdefault("max_iterations", 5)
    return Agent(provider=FunctionModel(fn), model="m", clock=StepClock(), seed=seed,
                 sink=sink, **kw)


# ── a price that changes, a first word that does not ────────────────────────


def _price(request: LLMRequest) -> Reply:
    return "The grinder costs " + ("149" if "Winter sale" in request.system else "189") + " EUR."


def price_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """``sale-banner`` (no shared word with the answer) makes the price 149 instead of 189."""
    return _agent(_price, sink=sink, seed=seed, injections=[
        *DECOYS, define_instruction("sale-banner", prompt="Winter sale is running.")])


# ── an early instruction misleads the first tool pick ───────────────────────


def archive(order: str) -> str:
    """Look an order up in the archive."""
    return f"order {order}: status LOST, refund 0"


def live(order: str) -> str:
    """Look an order up in the live system."""
    return f"order {order}: status DELIVERED, refund 0"


def _first_pick(request: LLMRequest) -> Reply:
    results = [m for m in request.messages if m.role == "tool"]
    if not results:
        name = "archive" if "Legacy mode" in request.system else "live"
        return ToolCall(id="", name=name, arguments={"order": "G-7"})
    status = "LOST" if "LOST" in results[-1].content else "DELIVERED"
    return f"The grinder order G-7 is {status}."


def early_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """``legacy-hint`` is active at iteration 1 only and makes the model pick the archive."""
    return _agent(_first_pick, sink=sink, seed=seed, tools=[tool(archive), tool(live)],
                  injections=[*DECOYS, define_instruction(
                      "legacy-hint", prompt="Legacy mode: prefer old systems.",
                      active_when=lambda ctx: ctx.iteration == 1)])


# ── twin tools from a tools-only injection ──────────────────────────────────


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: 189 EUR"


def lookup_v2(order: str) -> str:
    """Look an order up (new)."""
    return f"order {order}: 149 EUR"


def _twin(request: LLMRequest) -> Reply:
    results = [m for m in request.messages if m.role == "tool"]
    if not results:
        names = [t.name for t in request.tools]
        pick = "lookup_v2" if "lookup_v2" in names else "lookup"
        return ToolCall(id="", name=pick, arguments={"order": "G-7"})
    return "The grinder costs " + results[-1].content.split(": ")[1] + "."


def twin_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """``beta-tools`` adds only a tool, ``lookup_v2``, which the model prefers."""
    return _agent(_twin, sink=sink, seed=seed, tools=[tool(lookup)], injections=[
        *DECOYS, define_injection("beta-tools", "custom", Always(), tools=[tool(lookup_v2)])])


# ── a redundant pair ───────────────────────────────────────────────────────


def _pair(request: LLMRequest) -> Reply:
    return "The grinder costs " + ("149" if "149" in request.system else "189") + " EUR."


def pair_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """``memo-a`` and ``memo-b`` both carry 149; either alone keeps the answer."""
    return _agent(_pair, sink=sink, seed=seed, injections=[
        *DECOYS, define_fact("memo-a", "Price memo: 149."),
        define_fact("memo-b", "Catalogue note: 149.")])


# ── a harmless piece whose removal crashes the model ───────────────────────


def _fragile(request: LLMRequest) -> Reply:
    if "Answer format" not in request.system:
        raise RuntimeError("the model lost its answer format")
    return _price(request)


def crash_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """Without ``format-guide`` the model raises; ``sale-banner`` is the cause."""
    return _agent(_fragile, sink=sink, seed=seed, injections=[
        *DECOYS, define_instruction("format-guide", prompt="Answer format: one sentence."),
        define_instruction("sale-banner", prompt="Winter sale is running.")])


# ── a removal that makes the model loop ────────────────────────────────────


def _looping(request: LLMRequest) -> Reply:
    if "Stop after one lookup" not in request.system:
        return ToolCall(id="", name="lookup", arguments={"order": "G-7"})
    return _price(request)


def loop_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """Without ``stop-rule`` the model calls tools until max_iterations (never answers)."""
    return _agent(_looping, sink=sink, seed=seed, tools=[tool(lookup)], injections=[
        *DECOYS, define_instruction("stop-rule", prompt="Stop after one lookup."),
        define_instruction("sale-banner", prompt="Winter sale is running.")])


# ── a sampling model ───────────────────────────────────────────────────────


def sampling_agent(sink: EventSink | None = None, seed: int = 0, p: float = 0.5,
                   rng_seed: int = 7) -> Agent:
    """A model whose price flips at random with probability ``p``, whatever the prompt."""
    rng = random.Random(rng_seed)

    def sample(request: LLMRequest) -> Reply:
        return "The grinder costs " + ("149" if rng.random() < p else "189") + " EUR."

    return _agent(sample, sink=sink, seed=seed, injections=[
        *DECOYS, define_instruction("sale-banner", prompt="Winter sale is running.")])


# ── a piece that lands only at the second call ─────────────────────────────


def _late(request: LLMRequest) -> Reply:
    results = [m for m in request.messages if m.role == "tool"]
    if not results:
        return ToolCall(id="", name="lookup", arguments={"order": "G-7"})
    return "The grinder costs " + ("149" if "Winter sale" in request.system else "189") + " EUR."


def late_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """``late-note`` lands from iteration 2 on; the first call is the same without it."""
    return _agent(_late, sink=sink, seed=seed, tools=[tool(lookup)], injections=[
        *DECOYS[:2], define_instruction("late-note", prompt="Winter sale is running.",
                                        active_when=lambda ctx: ctx.iteration >= 2)])


# ── stale history from an earlier turn ─────────────────────────────────────

FIRST, FOLLOW = "What did the grinder cost in the winter sale?", "And what does it cost now?"


def _recall(request: LLMRequest) -> Reply:
    if request.messages[-1].content != FOLLOW:
        return _price(request)
    said = " ".join(m.content for m in request.messages if m.role == "assistant")
    return "It costs " + ("149" if "149" in said else "189") + " EUR."


def stale_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """Turn 0 answers 149 (the sale); turn 1 repeats the price its history carries."""
    return _agent(_recall, sink=sink, seed=seed, injections=[
        *DECOYS, define_instruction("sale-banner", prompt="Winter sale is running.",
                                    active_when=lambda ctx: "winter" in ctx.user_message)])


# ── a long tool loop (many events, one answer) ─────────────────────────────


def page(n: int) -> str:
    """Read one page."""
    return f"page {n}: nothing about prices"


def long_agent(sink: EventSink | None = None, seed: int = 0, pages: int = 60) -> Agent:
    """Reads ``pages`` pages one call at a time, then answers from the sale banner."""
    def fn(request: LLMRequest) -> Reply:
        done = sum(1 for m in request.messages if m.role == "tool")
        if done < pages:
            return ToolCall(id="", name="page", arguments={"n": done})
        return _price(request)

    facts = [define_fact(f"note-{i}", f"Note {i} on grinders.") for i in range(12)]
    return _agent(fn, sink=sink, seed=seed, tools=[tool(page)], max_iterations=pages + 2,
                  injections=[*facts, define_instruction("sale-banner",
                                                         prompt="Winter sale is running.")])
