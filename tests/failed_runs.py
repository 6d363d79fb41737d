"""A failed run, recorded: the model looks an order up, then its second call raises."""

from __future__ import annotations

from pathlib import Path

from footprint._errors import RunError
from footprint.agent import Agent, SeededIds, StepClock
from footprint.events import EventSink
from footprint.providers import FunctionModel, LLMRequest, call

ERROR_MESSAGE = (
    "upstream said 503 Service Unavailable: the billing backend is down for maintenance "
    "until 03:00 UTC; retry later or route this customer to a human agent "
    "(this message is long on purpose: no screen may cut it) -- END-OF-ERROR"
)
"""The failing call's message, longer than any column a table would cut it at."""


class BackendDown(RuntimeError):
    """What the failing model call raises."""


def _brain(request: LLMRequest) -> object:
    if not any(m.role == "tool" for m in request.messages):
        return call("lookup_order", order_id="A-17")
    raise BackendDown(ERROR_MESSAGE)


def failing_agent(sink: EventSink, *, seed: int = 7) -> Agent:
    """An agent (model ``gpt-4o-mini``) whose second model call raises :class:`BackendDown`
    (the engine stops the run with a ``RunError`` quoting it)."""

    def lookup_order(order_id: str) -> str:
        """Find an order by its id."""
        return f"order {order_id}: shipped"

    return Agent(provider=FunctionModel(_brain, name="openai"), model="gpt-4o-mini",
                 tools=[lookup_order], sink=sink, clock=StepClock(), ids=SeededIds(seed),
                 max_iterations=4, name="failing-desk")


def record_failed(path: Path) -> str:
    """Record one failed run into a store at ``path``; its run id."""
    from recorder import ParquetSink, Recorder

    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        agent = failing_agent(recorder)
        try:
            agent.run_sync("where is my order A-17?")
        except RunError as exc:
            assert ERROR_MESSAGE in str(exc)
        else:
            raise AssertionError("the failing agent did not fail")
    finally:
        recorder.close()
    from recorder import open_store

    return str(open_store(path).rows("SELECT run_id FROM runs")[0][0])
