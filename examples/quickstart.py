"""The smallest complete agent: one steering, one fact, one tool, an offline model.

Run it: ``python examples/quickstart.py``. It prints the answer, then the
type of every event the run emitted.
"""

from __future__ import annotations

from footprint import (
    Agent,
    FunctionModel,
    ListSink,
    StepClock,
    define_fact,
    define_steering,
)
from footprint.providers import LLMRequest, Reply, call


def opening_hours(day: str) -> str:
    """The shop's opening hours on one day of the week."""
    return "closed" if day.lower() == "sunday" else "09:00-17:00"


def model(request: LLMRequest) -> Reply:
    """A stand-in model: call the tool once, then answer from its result and the facts."""
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:
        return call("opening_hours", day="saturday")
    shop = "Kettle & Co" if "Kettle & Co" in request.system else "the shop"
    return f"On Saturday {shop} is open {results[-1]}."


def main() -> int:
    sink = ListSink()
    agent = Agent(
        provider=FunctionModel(model), model="offline",
        injections=[define_steering("brief", "Answer in one sentence."),
                    define_fact("shop", "The shop is called Kettle & Co.")],
        tools=[opening_hours], sink=sink, clock=StepClock(),
    )
    result = agent.run_sync("When are you open on Saturday?")
    print(result.answer)
    for event, kind in zip(sink.events, sink.types(), strict=True):
        print(f"{event.seq:>3}  {kind:<22} {event.step_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
