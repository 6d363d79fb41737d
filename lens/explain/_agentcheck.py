"""The agent a re-run rebuilds, checked against the recorded run's configuration.

A factory that builds another release than the recorded run (another model, a
changed injection, a tool more or less, another graph) makes every re-run a
different agent: its answers then differ for a reason no removal explains, and
the search would read that as the model's noise. Before any re-run, the
agent's declarations (``run.configured``, ``skill.graph_declared``,
``injection.declared``: model, provider, tools, graph, each injection by id
and content hash) are made as its next run would make them, without running
it, and compared with the recorded ones as ``footprint replay`` compares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from footprint.agent._clock import StepClock
from footprint.agent._emitter import RunEmitter
from footprint.agent._turn import declare_run
from footprint.events import Event, ListSink, RunStart
from lens.playback._stream import DECLARATION_TYPES, config_changes, decisions_of

__all__ = ["configuration_changes"]


def configuration_changes(recorded: Sequence[Event], agent: Any) -> tuple[str, ...]:
    """How ``agent``'s configuration differs from the recorded run's (``replay``'s lines:
    ``- type: …`` only recorded, ``+ type: …`` only the agent's, ``~ type: field: …``);
    empty when they agree, or when either side declares nothing to compare."""
    setup = getattr(agent, "setup", None)
    start = next((e for e in recorded if isinstance(e, RunStart)), None)
    if setup is None or start is None or not any(
            e.type in DECLARATION_TYPES for e in recorded):
        return ()
    sink = ListSink()
    declare_run(setup, RunEmitter(sink, StepClock(), start.run_id, start.turn))
    declared, _ = decisions_of(e for e in recorded if e.type in DECLARATION_TYPES)
    made, _ = decisions_of(cast("list[Event]", sink.events))
    return config_changes(declared, made)
