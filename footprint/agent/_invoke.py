"""Running one plain tool, bounded by its timeout.

A coroutine tool is awaited under ``asyncio.wait_for``. A plain function
runs on its own daemon thread whenever a timeout applies or the batch runs
several tools at once, so a hanging function can be abandoned: the run goes
on and the thread is left to finish (or not) without holding the process
open. Only a single untimed function runs inline on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

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


def _on_thread(fn: Callable[[Mapping[str, Any]], Any],
               args: Mapping[str, Any], name: str) -> asyncio.Future[Any]:
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def work() -> None:
        try:
            value, exc = fn(args), None
        except BaseException as err:  # handed to the awaiting run, never lost in the thread
            value, exc = None, err
        with contextlib.suppress(RuntimeError):  # the run ended: the tool was abandoned
            loop.call_soon_threadsafe(_settle, fut, value, exc)

    threading.Thread(target=work, name=f"footprint-tool-{name}", daemon=True).start()
    return fut


async def _bounded(work: Any, timeout_s: float | None) -> Any:
    """Await ``work``; only running out of time is ``ToolTimedOut`` (a tool's own
    ``TimeoutError`` stays its own)."""
    if timeout_s is None:
        return await work
    task = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=timeout_s)
    if not done:
        task.cancel()
        raise ToolTimedOut(timeout_s)
    return task.result()


async def invoke(execute: Callable[[Mapping[str, Any]], Any], args: Mapping[str, Any], *,
                 name: str, timeout_s: float | None, threaded: bool) -> Any:
    """The tool's value; raises :class:`ToolTimedOut` after ``timeout_s`` seconds."""
    if inspect.iscoroutinefunction(execute) or (timeout_s is None and not threaded):
        value = execute(args)
    else:
        value = await _bounded(_on_thread(execute, args, name), timeout_s)
    if inspect.isawaitable(value):
        value = await _bounded(value, timeout_s)
    return value
