"""A sink that raises never breaks a run, and the run's end says how many events it lost."""

from __future__ import annotations

from agent_support import make_agent

from footprint.events import EventBase, ListSink, RunEnd
from footprint.providers import ScriptedModel, call


class FlakySink(ListSink):
    """Keeps every event except context pieces, on which it raises."""

    def emit(self, event: EventBase) -> None:
        if getattr(event, "type", "") == "context.injected":
            raise OSError("disk full")
        super().emit(event)


def test_given_a_raising_sink_when_a_run_records_then_it_finishes_and_counts_the_losses() -> None:
    from footprint.agent import tool

    def ping() -> str:
        """Ping."""
        return "pong"

    sink = FlakySink()
    agent = make_agent(ScriptedModel([call("ping"), "done"]), sink, tools=[tool(ping)],
                       system_prompt="You are brief.")
    assert agent.run_sync("go").answer == "done"
    end = sink.events[-1]
    assert isinstance(end, RunEnd)
    lost = end.dropped_events
    assert lost > 0
    assert sink.events[-1].seq == len(sink.events) + lost - 1  # seq stayed gap-free at the source
