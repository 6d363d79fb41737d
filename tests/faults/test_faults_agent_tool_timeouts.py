"""Coroutine tools that defeat their timeout (issue 26 item 9): one that swallows its
cancellation, one that blocks the event loop in C. Each is recorded as timed out and
``run_sync`` returns; the run goes on as for any tool timeout."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from agent_support import make_agent, of, one

from footprint.agent import tool
from footprint.events import ListSink, ToolEnd
from footprint.providers import ScriptedModel, call

TIMEOUT = 0.2
STOP = threading.Event()  # set by a test that lets the stubborn tool end


async def stubborn() -> str:
    """Work on, whatever happens."""
    while not STOP.is_set():
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            continue  # swallowed: the cancellation at the deadline changes nothing
    return "stopped"


async def blocking() -> str:
    """Block the event loop in C past the deadline."""
    time.sleep(3 * TIMEOUT)
    return "late answer"


def _run_in_thread(fn: Any, within_s: float) -> Any:
    """``fn()`` on a thread; fails (instead of hanging the suite) when it does not return."""
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    worker.start()
    worker.join(within_s)
    assert not worker.is_alive(), f"run_sync did not return within {within_s} s"
    return box[0]


def _timed_out(end: ToolEnd) -> None:
    assert (end.status, end.status_by, end.error, end.timeout_s) == (
        "failure", "host", True, TIMEOUT)
    assert f"did not finish within {TIMEOUT:g} s" in end.result


def test_given_a_tool_swallowing_its_cancellation_when_it_times_out_then_run_sync_returns(
) -> None:
    sink = ListSink()
    agent = make_agent(ScriptedModel([call("stubborn"), "went on"]), sink,
                       tools=[tool(stubborn, timeout_s=TIMEOUT)])
    t0 = time.monotonic()
    result = _run_in_thread(lambda: agent.run_sync("go"), within_s=10)
    assert time.monotonic() - t0 < 5
    assert result.answer == "went on"
    _timed_out(one(sink.events, ToolEnd))


def test_given_a_tool_swallowing_its_cancellation_when_awaited_then_the_run_returns() -> None:
    sink = ListSink()
    agent = make_agent(ScriptedModel([call("stubborn"), "went on"]), sink,
                       tools=[tool(stubborn, timeout_s=TIMEOUT)])

    async def main() -> str:
        result = await asyncio.wait_for(agent.run("go"), 10)
        return result.answer

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(main()) == "went on"
        left = asyncio.all_tasks(loop)  # the stubborn tool, still going in the caller's loop
        assert len(left) == 1
        STOP.set()
        loop.run_until_complete(asyncio.wait(left, timeout=5))
    finally:
        STOP.clear()
        loop.close()
    _timed_out(one(sink.events, ToolEnd))


def test_given_a_tool_blocking_the_loop_in_c_when_it_overruns_then_it_is_recorded_as_timed_out(
) -> None:
    sink = ListSink()
    model = ScriptedModel([call("blocking"), "went on"])
    result = _run_in_thread(lambda: make_agent(
        model, sink, tools=[tool(blocking, timeout_s=TIMEOUT)]).run_sync("go"), within_s=10)
    assert result.answer == "went on"
    end = one(sink.events, ToolEnd)
    _timed_out(end)
    assert "late answer" not in end.result
    seen = model.requests[-1].messages[-1]
    assert seen.role == "tool" and "did not finish within" in seen.content


def test_given_a_blocking_tool_and_an_agent_timeout_when_it_overruns_then_the_agent_limit_applies(
) -> None:
    sink = ListSink()
    _run_in_thread(lambda: make_agent(ScriptedModel([call("blocking"), "ok"]), sink,
                                      tools=[tool(blocking)], tool_timeout_s=TIMEOUT
                                      ).run_sync("go"), within_s=10)
    _timed_out(one(sink.events, ToolEnd))


async def quick() -> str:
    """Answer at once."""
    await asyncio.sleep(0)
    return "fine"


def test_given_a_quick_coroutine_with_a_timeout_when_called_then_its_result_is_kept() -> None:
    sink = ListSink()
    make_agent(ScriptedModel([call("quick"), "ok"]), sink,
               tools=[tool(quick, timeout_s=TIMEOUT)]).run_sync("go")
    ends = of(sink.events, ToolEnd)
    assert [(e.result, e.status_by, e.timeout_s) for e in ends] == [("fine", None, None)]
