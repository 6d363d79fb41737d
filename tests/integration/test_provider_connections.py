"""One HTTP client per process: ``run_sync`` after ``run_sync`` (a new event loop
each time), and runs from several threads, reuse the process's connections to a
local server on 127.0.0.1 (tests/llamacpp_like.py counts every TCP connection it
accepts and every one a client closes); the process closes them at its exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import pytest
from llamacpp_like import LlamaLike, llamacpp_like

from footprint import Agent
from footprint.agent import tool
from footprint.events import ListSink
from footprint.providers import OpenAIChat


@pytest.fixture
def llama() -> Iterator[LlamaLike]:
    with llamacpp_like() as server:
        yield server


def weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21C"


def _agent(base_url: str) -> Agent:
    return Agent(provider=OpenAIChat("tiny", base_url=base_url), model="tiny",
                 tools=[tool(weather)], sink=ListSink())


def test_given_20_run_syncs_when_each_has_its_own_loop_then_one_tcp_connection_serves_all(
    llama: LlamaLike,
) -> None:
    answers = [_agent(llama.base_url).run_sync(f"Weather in Oslo? ({k})").answer
               for k in range(20)]
    assert answers == ["From the tools: Oslo: sunny, 21C"] * 20
    assert len(llama.bodies) == 40  # a tool call, then the answer, per run
    assert (llama.connections, llama.wait_closed(1, within_s=0.3)) == (1, 0)


def test_given_run_syncs_in_several_threads_when_they_overlap_then_each_answers_on_shared_ones(
    llama: LlamaLike,
) -> None:
    answers: list[str] = []

    def runs() -> None:
        agent = _agent(llama.base_url)
        answers.extend(agent.run_sync("Weather in Oslo?").answer for _ in range(5))

    threads = [threading.Thread(target=runs) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert answers == ["From the tools: Oslo: sunny, 21C"] * 20
    opened = llama.connections
    assert 1 <= opened <= 4  # at most one per call in flight at once
    later = threading.Thread(target=runs)
    later.start()
    later.join(timeout=30)
    assert (llama.connections, llama.wait_closed(1, within_s=0.3)) == (opened, 0)


def test_given_a_provider_closed_when_it_calls_again_then_a_new_connection_is_opened(
    llama: LlamaLike,
) -> None:
    model = OpenAIChat("tiny", base_url=llama.base_url)
    agent = Agent(provider=model, model="tiny", sink=ListSink())
    agent.run_sync("hi")
    model.close()
    assert llama.wait_closed(1) == 1
    agent.run_sync("again")
    assert (llama.connections, model.pool.built) == (2, 2)


CHILD = """
import atexit, sys
def last_at_exit():  # registered first, so it runs after footprint's own exit hook
    print("exiting", flush=True)
    sys.stdin.readline()  # the parent looks at the server, then lets the child go
atexit.register(last_at_exit)
from footprint import Agent
from footprint.events import ListSink
from footprint.providers import OpenAIChat
agent = Agent(provider=OpenAIChat("tiny", base_url=sys.argv[1]), model="tiny", sink=ListSink())
print(agent.run_sync("hi").answer, flush=True)
"""


def test_given_a_process_with_open_connections_when_it_exits_then_it_closes_them_first(
    llama: LlamaLike,
) -> None:
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD), llama.base_url],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "I have no tools to use."
        assert child.stdout.readline().strip() == "exiting"
        closed_while_alive = llama.wait_closed(1)
        assert child.poll() is None  # still alive: the connection was closed by the process
    finally:
        child.stdin.write("go\n")
        child.stdin.close()
        child.wait(timeout=10)
    assert (llama.connections, closed_while_alive, child.returncode) == (1, 1, 0)
