"""Plain tools run on worker threads the agent keeps across calls and runs (issue 25 item 5):
no thread per call, a stuck worker never holds a later call up, close() ends them."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable

from agent_support import make_agent, of

from footprint.agent import tool
from footprint.agent._workers import ToolWorkers
from footprint.events import ListSink, ToolEnd
from footprint.providers import ScriptedModel, call

SEEN: list[threading.Thread] = []
RELEASE = threading.Event()


def where() -> str:
    """Say which thread runs this call."""
    SEEN.append(threading.current_thread())
    return "here"


def stuck() -> str:
    """Hang until released."""
    SEEN.append(threading.current_thread())
    RELEASE.wait(10)
    return "late"


def _script(n: int) -> ScriptedModel:
    return ScriptedModel([*(call("where") for _ in range(n)), "done"])


def test_given_an_agent_when_runs_call_a_plain_tool_then_one_worker_thread_serves_every_call(
) -> None:
    SEEN.clear()
    script = [call("where"), call("where"), call("where"), "done", call("where"), call("where"),
              "done"]
    agent = make_agent(ScriptedModel(script), ListSink(), tools=[tool(where)])
    agent.run_sync("first")
    agent.run_sync("second")
    assert len(SEEN) == 5
    assert len({id(t) for t in SEEN}) == 1, SEEN
    assert SEEN[0] is not threading.main_thread() and SEEN[0].daemon


def test_given_a_worker_stuck_past_its_timeout_when_the_next_call_comes_then_it_runs_at_once(
) -> None:
    SEEN.clear()
    sink = ListSink()
    agent = make_agent(ScriptedModel([call("stuck"), call("where"), "done"]), sink,
                       tools=[tool(stuck, timeout_s=0.2), tool(where, timeout_s=5)])
    try:
        agent.run_sync("go")
        stuck_thread, other = SEEN
        assert stuck_thread is not other and stuck_thread.is_alive()  # still in its call
        assert [(e.tool_name, e.result[:10], e.timeout_s) for e in of(sink.events, ToolEnd)] == [
            ("stuck", "stuck fail", 0.2), ("where", "here", None)]
    finally:
        RELEASE.set()
        agent.close()
    stuck_thread.join(5)
    assert not stuck_thread.is_alive()  # released and closed: the worker ended
    RELEASE.clear()


def test_given_an_agent_that_ran_tools_when_closed_then_its_idle_workers_end() -> None:
    SEEN.clear()
    with make_agent(_script(2), ListSink(), tools=[tool(where)]) as agent:
        agent.run_sync("go")
        (worker,) = set(SEEN)
        assert worker.is_alive()
    worker.join(5)
    assert not worker.is_alive()


def test_given_an_agent_when_it_is_collected_then_its_idle_workers_end() -> None:
    SEEN.clear()
    agent = make_agent(_script(1), ListSink(), tools=[tool(where)])
    agent.run_sync("go")
    gone = weakref.ref(agent)
    del agent
    gc.collect()
    assert gone() is None
    SEEN[0].join(5)
    assert not SEEN[0].is_alive()


def test_given_more_calls_at_once_than_kept_when_they_end_then_only_keep_workers_stay() -> None:
    pool = ToolWorkers(keep=1)
    started, go = threading.Barrier(3), threading.Event()
    threads: list[threading.Thread] = []

    def job() -> Callable[[], None]:
        threads.append(threading.current_thread())
        started.wait(5)
        go.wait(5)
        return lambda: None

    for _ in range(3):
        pool.submit(job)
    go.set()
    for thread in threads:
        thread.join(0.5)
    assert pool.threads_started == 3
    assert sum(t.is_alive() for t in threads) == 1
    pool.close()


def test_given_an_idle_worker_when_idle_too_long_then_it_ends_and_a_later_job_still_runs(
) -> None:
    pool = ToolWorkers(keep=2, idle_s=0.05)
    ran: list[threading.Thread] = []
    pool.submit(lambda: ran.append(threading.current_thread()) or (lambda: None))
    deadline = time.monotonic() + 5
    while (not ran or ran[0].is_alive()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not ran[0].is_alive()
    done = threading.Event()
    pool.submit(lambda: done.set)
    assert done.wait(5)
    assert pool.threads_started == 2
    pool.close()


def test_given_an_agent_with_an_idle_worker_when_the_process_forks_then_the_child_runs_tools(
) -> None:
    SEEN.clear()
    script = [call("where"), "done", call("where"), "done"]
    agent = make_agent(ScriptedModel(script), ListSink(), tools=[tool(where)])
    agent.run_sync("before the fork")  # leaves one idle worker, in the parent only
    pid = os.fork()
    if pid == 0:  # the child: its run must not wait for the parent's worker
        code = 1
        try:
            code = 0 if agent.run_sync("in the child").answer == "done" else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise AssertionError("the forked child's run never ended")
    assert os.waitstatus_to_exitcode(status) == 0


async def where_async() -> str:
    """Say which thread and loop run this call."""
    SEEN.append(threading.current_thread())
    return "here"


def test_given_a_coroutine_tool_with_a_timeout_when_called_then_it_runs_on_the_loop_thread(
) -> None:
    SEEN.clear()
    agent = make_agent(ScriptedModel([call("where_async"), "done"]), ListSink(),
                       tools=[tool(where_async, timeout_s=5)])
    agent.run_sync("go")
    assert SEEN[0] is threading.current_thread() and len(SEEN) == 1
    assert agent._tool_workers().threads_started == 0
