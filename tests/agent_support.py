"""Small helpers shared by the agent-level tests (deterministic models only)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from footprint.agent import Agent, StepClock
from footprint.events import ContextEvaluated, EventBase, ListSink
from footprint.injection import Injection, define_skill
from footprint.providers import Provider

E = TypeVar("E", bound=EventBase)

# Events that fire every iteration and would drown a sequence assertion.
NOISE = frozenset({
    "context.injected", "context.slot_composed", "context.budget_pressure",
    "injection.declared", "run.configured", "skill.graph_declared",
})


def skill(skill_id: str, description: str | None = None, **kw: Any) -> Injection:
    """A skill with a one-line body."""
    return define_skill(skill_id, description or f"{skill_id} work", f"You do {skill_id}.", **kw)


def make_agent(provider: Provider, sink: ListSink, **kw: Any) -> Agent:
    """An agent with a deterministic clock writing to ``sink``."""
    kw.setdefault("model", "agent-model")
    kw.setdefault("max_iterations", 6)
    return Agent(provider=provider, sink=sink, clock=StepClock(), **kw)


def types_of(events: Iterable[EventBase], *, quiet: bool = True) -> list[str]:
    """Event types in order; ``quiet`` drops the per-iteration composition noise."""
    tags = (str(getattr(e, "type", "")) for e in events)
    return [t for t in tags if not (quiet and t in NOISE)]


def of(events: Sequence[EventBase], cls: type[E]) -> list[E]:
    """Every event of class ``cls``, in order."""
    return [e for e in events if isinstance(e, cls)]


def one(events: Sequence[EventBase], cls: type[E]) -> E:
    """The single event of class ``cls``; fails when there are none or several."""
    found = of(events, cls)
    assert len(found) == 1, f"expected one {cls.__name__}, got {len(found)}"
    return found[0]


def evaluated(events: Sequence[EventBase], iteration: int) -> ContextEvaluated:
    """The ``context.evaluated`` of one iteration."""
    return next(e for e in of(events, ContextEvaluated) if e.iteration == iteration)


def last_run(events: Sequence[EventBase]) -> list[EventBase]:
    """The events of the last run in ``events``."""
    run_id = events[-1].run_id
    return [e for e in events if e.run_id == run_id]
