"""Why read from a store decodes only the answer's causal past, and says the same.

Without an agent (no re-run will serve recorded replies), the model replies
are decoded only for the explained call and the last one: the tool results
name the call that chose them and the explained request holds every earlier
tool call's arguments. The report must not change by it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from footprint import Agent, FunctionModel, StepClock, define_fact, define_steering
from footprint.providers import LLMRequest, Reply, call
from lens import why
from lens.explain._report import why_dict
from recorder import ParquetSink, Recorder, open_store

PAGES = 12


def page(n: int) -> str:
    """One page of the customer's order history."""
    return json.dumps({"page": n, "orders": [f"A-{n}{i}" for i in range(3)]})


def _pager(request: LLMRequest) -> Reply:
    done = sum(1 for m in request.messages if m.role == "tool")
    if done < PAGES:
        return call("page", n=done)
    return f"Read {done} pages of orders: none is overdue, so no refund is due."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("why-read") / "store"
    pieces = [define_steering("rule", "Be precise about orders."),
              define_fact("archive", "Orders older than 30 days are archived.")]
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        Agent(provider=FunctionModel(_pager, name="pager"), model="m", tools=[page],
              injections=pieces, sink=recorder, clock=StepClock(),
              max_iterations=PAGES + 2).run_sync("Is any of my orders overdue?")
    return root


def _report(store: Path, *, every_reply: bool, monkeypatch: pytest.MonkeyPatch,
            step: str | None = None) -> dict[str, Any]:
    import lens.explain._why as module

    load = module._load
    monkeypatch.setattr(module, "_load", lambda source, run, at, reruns: load(
        source, run, at, every_reply))
    data = why_dict(why(open_store(store), "last", step=step))
    monkeypatch.setattr(module, "_load", load)
    return data


@pytest.mark.parametrize("step", [None, "llm#5"])
def test_given_a_tool_loop_when_why_reads_only_the_replies_it_needs_then_the_report_is_the_same(
    store: Path, monkeypatch: pytest.MonkeyPatch, step: str | None,
) -> None:
    lean = _report(store, every_reply=False, monkeypatch=monkeypatch, step=step)
    full = _report(store, every_reply=True, monkeypatch=monkeypatch, step=step)
    assert lean["events_read"] < full["events_read"]
    lean.pop("events_read"), full.pop("events_read")
    assert lean == full
    args = [s for s in lean["suspects"] if s["kind"] == "tool_result"]
    assert args and all('{"n": ' in " ".join(s["chain"]) for s in args), args[:2]


def test_given_a_step_that_is_no_model_call_when_why_reads_then_it_names_the_near_one(
    store: Path,
) -> None:
    from footprint import ConfigError

    with pytest.raises(ConfigError, match="did you mean 'llm#5'"):
        why(open_store(store), "last", step="llm#55")
