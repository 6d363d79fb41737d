"""A release tried on a dataset before it ships: which items regress, and why.

Run it: ``python examples/release_regression.py [STORE]`` (without STORE, a
temporary folder deleted at the end). Offline and deterministic (a
``FunctionModel``). It records 20 production runs of a shop's helpdesk
(:func:`baseline`), labels each with the answer it should hold (feedback named
``expected``), makes a dataset of them, then runs three experiments on it:

- ``baseline``: the agent in production;
- ``changed``: :func:`release_changed` changes one injection, the ``returns``
  fact (it adds "Opened items cannot be returned."): the 3 items about opened
  items regress, and ``experiment compare`` names ``returns`` as the cause of each;
- ``reworded``: :func:`release_reworded` rewords the same fact without changing
  what it says: nothing regresses, and no cause is named.

The commands it runs are the ones a user types (FILE: this file)::

    footprint dataset create helpdesk --from-runs --expected-from-feedback
    footprint experiment run helpdesk --name baseline --agent FILE:baseline
    footprint experiment compare baseline changed
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from footprint import Agent, FunctionModel, StepClock, define_fact, define_steering
from footprint.events import EventSink
from footprint.providers import LLMRequest
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, feedback

HERE = Path(__file__).resolve()
SHIPPING = [f"How long does shipping to {city} take?" for city in (
    "Berlin", "Paris", "Madrid", "Rome", "Vienna", "Prague", "Oslo", "Lisbon", "Dublin",
    "Warsaw")]
RETURNS = [f"Can I return the {thing} I bought?" for thing in (
    "kettle", "toaster", "lamp", "chair")]
OPENED = [f"Can I return the opened {thing}?" for thing in ("kettle", "blender", "mixer")]
MORE = [f"Can I still return my {thing}?" for thing in ("rug", "mirror", "vase")]
QUESTIONS = [*SHIPPING, *RETURNS[:2], OPENED[0], *RETURNS[2:], OPENED[1], *MORE, OPENED[2]]
"""The 20 production questions, in the order they were asked (3 about opened items)."""

RETURNS_FACT = "Returns are accepted within 30 days."
CHANGED_FACT = "Returns are accepted within 30 days. Opened items cannot be returned."
REWORDED_FACT = "We accept returns for 30 days after delivery."


def expected_of(question: str) -> str:
    """The answer a question should hold (what support staff labelled)."""
    return "3 days" if "shipping" in question else "30 days"


def _reply(request: LLMRequest) -> str:
    """The stand-in model: answers from the facts in its system prompt."""
    question = [m.content for m in request.messages if m.role == "user"][-1].lower()
    if "shipping" in question:
        days = re.search(r"shipping takes (\d+) days", request.system)
        return f"Standard shipping takes {days.group(1) if days else 'a few'} days."
    if "opened" in question and "cannot be returned" in request.system:
        return "Sorry, opened items cannot be returned."
    days = re.search(r"(\d+) days", request.system.split("Standard shipping")[0])
    return f"Yes: you can return it within {days.group(1) if days else 30} days."


def _agent(returns: str, sink: EventSink | None, release: str, shipping: int = 3) -> Agent:
    return Agent(provider=FunctionModel(_reply, name="helpdesk"), model="helpdesk-offline",
                 injections=[define_fact("returns", returns),
                             define_fact("shipping",
                                         f"Standard shipping takes {shipping} days."),
                             define_steering("tone", "Answer in one short sentence.")],
                 sink=sink, clock=StepClock(), release=release)


def baseline(sink: EventSink | None = None) -> Agent:
    """The helpdesk in production (release 1.0)."""
    return _agent(RETURNS_FACT, sink, "1.0")


def release_changed(sink: EventSink | None = None) -> Agent:
    """Release 1.1: the ``returns`` fact says opened items cannot be returned."""
    return _agent(CHANGED_FACT, sink, "1.1")


def release_reworded(sink: EventSink | None = None) -> Agent:
    """Release 1.1-wording: the ``returns`` fact reworded, the same policy."""
    return _agent(REWORDED_FACT, sink, "1.1-wording")


def release_slow_shipping(sink: EventSink | None = None) -> Agent:
    """Release 1.2 (not run by :func:`main`): the ``shipping`` fact says 5 days. Removing
    the fact does not give the old answer back (the model then says "a few days");
    putting 1.0's version of it in its place does, so ``compare`` still names it."""
    return _agent(RETURNS_FACT, sink, "1.2", shipping=5)


def record_production(store: str | Path) -> list[str]:
    """Record the 20 production runs, each labelled with its expected answer."""
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        agent = baseline(sink=recorder)
        ids = [agent.run_sync(q, user=f"customer-{i}").run_id for i, q in enumerate(QUESTIONS)]
    finally:
        recorder.close()
    for run_id, question in zip(ids, QUESTIONS, strict=True):
        feedback(store, run_id, "expected", label=expected_of(question), by="support")
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", nargs="?", help="where to record (default: a temporary folder)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        store = args.store or str(Path(scratch) / "store")
        record_production(store)
        steps = [["dataset", "create", "helpdesk", "--from-runs", "--expected-from-feedback"]]
        for name, factory in (("baseline", "baseline"), ("changed", "release_changed"),
                              ("reworded", "release_reworded")):
            steps.append(["experiment", "run", "helpdesk", "--agent", f"{HERE}:{factory}",
                          "--name", name])
        steps += [["experiment", "compare", "baseline", "changed"],
                  ["experiment", "compare", "baseline", "reworded"]]
        for step in steps:
            print(f"$ footprint {' '.join(step)}".replace(str(HERE), "examples/" + HERE.name))
            code = footprint([*step, "--store", store])
            if code != 0:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
