"""Running a run to its end from code without an event loop (``run_sync``).

As ``asyncio.run`` does, with one difference: a tool coroutine abandoned at
its timeout is not waited for when the loop closes. ``asyncio.run`` cancels
every task left and waits for each to end, so a tool that swallows its
cancellation kept ``run_sync`` from ever returning. Here such a tool is left
where it is and the loop is closed under it (Python closes the coroutine when
it is collected); every other task left is cancelled and waited for, as
``asyncio.run`` does. When a tool was abandoned, the loop's default executor
is not waited for either (an abandoned ``asyncio.to_thread`` call may never
return).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["abandon", "run_to_end"]

T = TypeVar("T")

_ABANDONED: contextvars.ContextVar[list[asyncio.Task[Any]] | None] = contextvars.ContextVar(
    "footprint_abandoned_tools", default=None)


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # an abandoned tool's late error is nobody's to report


def abandon(task: asyncio.Task[Any]) -> None:
    """Cancel a timed-out tool's task and never wait for it again."""
    task.cancel()
    task.add_done_callback(_retrieve)
    abandoned = _ABANDONED.get()
    if abandoned is not None:
        abandoned.append(task)


def run_to_end(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, without waiting for the tools it abandoned."""
    abandoned: list[asyncio.Task[Any]] = []
    context = contextvars.copy_context()
    context.run(_ABANDONED.set, abandoned)
    runner = asyncio.Runner()  # for its Ctrl-C handling; closed below, not by runner.close()
    try:
        return runner.run(main, context=context)
    finally:
        _close(runner.get_loop(), abandoned)


def _close(loop: asyncio.AbstractEventLoop, abandoned: list[asyncio.Task[Any]]) -> None:
    skip = {id(t) for t in abandoned}
    for task in abandoned:  # its tool.end says it timed out; asyncio's "Task was destroyed
        with contextlib.suppress(AttributeError):  # but it is pending!" would only repeat it
            task._log_destroy_pending = False  # type: ignore[attr-defined]
    try:
        left = [t for t in asyncio.all_tasks(loop) if id(t) not in skip]
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        for task in left:
            if not task.cancelled() and task.exception() is not None:
                loop.call_exception_handler({
                    "message": "unhandled exception during run_sync() shutdown",
                    "exception": task.exception(), "task": task})
        loop.run_until_complete(loop.shutdown_asyncgens())
        if not abandoned:
            loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
