"""Running one plain tool, bounded by its timeout.

A plain function runs on one of the agent's worker threads (``_workers``)
whenever a timeout applies or the batch runs several tools at once, so a
hanging function can be abandoned: the run goes on and the worker is left
to finish (or not) without holding the process open or a later call up.
Only a single untimed function runs inline on the loop.

A coroutine tool runs on the run's own event loop (it may use what that
loop owns: clients, locks, queues) under its deadline. At the deadline it is
cancelled and abandoned: the run goes on without waiting for it, even when
it swallows the cancellation (``run_sync`` does not wait for it either, see
``_sync``). A coroutine that blocks the loop (``time.sleep``, a C call, a
long computation) cannot be interrupted by anything on that loop: nothing
else of the run moves while it blocks. When it returns after its deadline
it is recorded as timed out all the same and what it returned is dropped,
as for a plain function abandoned at its deadline. A coroutine that blocks
forever blocks the run forever: make such a tool a plain function.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from footprint.agent._sync import abandon
from footprint.agent._workers import ToolWorkers

__all__ = ["ToolTimedOut", "invoke"]


class ToolTimedOut(Exception):
    """The tool did not finish within its timeout."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"did not finish within {timeout_s:g} s")
        self.timeout_s = timeout_s


def _settle(fut: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(value)


async def _on_worker(fn: Callable[[Mapping[str, Any]], Any], args: Mapping[str, Any],
                     workers: ToolWorkers, timeout_s: float | None) -> Any:
    """``fn(args)`` on a worker; at ``timeout_s`` the run stops waiting for it."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def work() -> Callable[[], None]:
        try:
            value, exc = fn(args), None
        except BaseException as err:  # handed to the awaiting run, never lost in the worker
            value, exc = None, err

        def hand_off() -> None:
            with contextlib.suppress(RuntimeError):  # the run ended: the tool was abandoned
                loop.call_soon_threadsafe(_settle, fut, value, exc)
        return hand_off

    workers.submit(work)
    if timeout_s is None:
        return await fut
    late = loop.call_later(timeout_s, _settle, fut, None, ToolTimedOut(timeout_s))
    try:
        return await fut
    finally:
        late.cancel()


async def _until_done(work: Awaitable[Any], ended: list[float],
                      loop: asyncio.AbstractEventLoop) -> Any:
    try:
        return await work
    finally:
        ended.append(loop.time())


async def _bounded(work: Awaitable[Any], timeout_s: float | None) -> Any:
    """Await ``work``; only running out of time is ``ToolTimedOut`` (a tool's own
    ``TimeoutError`` stays its own). Work that ends after its deadline (it held the
    loop) has timed out too."""
    if timeout_s is None:
        return await work
    loop = asyncio.get_running_loop()
    deadline, ended = loop.time() + timeout_s, list[float]()
    task = asyncio.ensure_future(_until_done(work, ended, loop))
    done, _ = await asyncio.wait({task}, timeout=timeout_s)
    if not done:
        abandon(task)
        raise ToolTimedOut(timeout_s)
    if ended and ended[0] > deadline:
        task.exception()  # retrieved: what it raised after its deadline is not reported
        raise ToolTimedOut(timeout_s)
    return task.result()


async def invoke(execute: Callable[[Mapping[str, Any]], Any], args: Mapping[str, Any], *,
                 timeout_s: float | None, workers: ToolWorkers | None) -> Any:
    """The tool's value; raises :class:`ToolTimedOut` after ``timeout_s`` seconds.

    ``workers`` runs a plain function (``None``: inline on the loop)."""
    if inspect.iscoroutinefunction(execute) or workers is None:
        value = execute(args)
    else:
        value = await _on_worker(execute, args, workers, timeout_s)
    if inspect.isawaitable(value):
        value = await _bounded(value, timeout_s)
    return value
