"""A sandboxed query bounded in time, and stopped by Ctrl-C.

DuckDB runs a query in native code: Python sees neither a clock nor a SIGINT
until it returns, so a recursive query that never ends held ``Store.sql``
(and the process) until it was killed. :func:`bounded` runs the query on a
worker thread while the calling thread waits: the wait ends at the time
limit, or with the ``KeyboardInterrupt`` Python raises in the main thread on
Ctrl-C, and either way the query is stopped with DuckDB's ``interrupt()``
(repeated until the worker is out, so an interrupt sent before the query
started is not lost). A timed-out query raises :class:`SqlTimeout`; a Ctrl-C
re-raises ``KeyboardInterrupt`` once the query stopped (at most
``_GRACE_S`` later).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from footprint._errors import ConfigError, RunError

__all__ = ["SqlTimeout", "bounded", "check_timeout"]

T = TypeVar("T")

_GRACE_S = 2.0
"""How long a stopped query may take to give its thread back before the caller goes on."""
_POLL_S = 0.05


class SqlTimeout(RunError):
    """A query stopped at its time limit (``Store.sql(timeout=…)``, ``footprint sql --timeout``)."""

    def __init__(self, limit: float, fix: str) -> None:
        super().__init__(f"query stopped at its time limit of {limit:g} s; {fix}")
        self.limit = limit


def check_timeout(timeout: object, where: str) -> float | None:
    """``timeout`` as seconds (``None``: no limit), else a :class:`ConfigError` naming ``where``."""
    if timeout is None:
        return None
    if (isinstance(timeout, bool) or not isinstance(timeout, int | float)
            or not math.isfinite(timeout) or timeout <= 0):
        raise ConfigError(f"{where}(timeout={timeout!r}): pass a number of seconds > 0, "
                          "or None for no time limit")
    return float(timeout)


class _Outcome(Generic[T]):
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


def bounded(fetch: Callable[[], T], interrupt: Callable[[], None], timeout: float | None,
            *, fix: str) -> T:
    """``fetch()`` stopped by ``interrupt()`` after ``timeout`` seconds or on Ctrl-C.

    Without a limit, off the main thread (no Ctrl-C reaches it), ``fetch`` runs here.
    ``fix`` ends the :class:`SqlTimeout` message (how to give a longer limit).
    """
    if timeout is None and threading.current_thread() is not threading.main_thread():
        return fetch()
    out: _Outcome[T] = _Outcome()

    def work() -> None:
        try:
            out.value = fetch()
        except BaseException as exc:  # handed to the waiting thread
            out.error = exc
        finally:
            out.done.set()

    threading.Thread(target=work, name="footprint-sql", daemon=True).start()
    try:
        finished = out.done.wait(timeout)
    except KeyboardInterrupt:
        _stop(out, interrupt)
        raise
    if not finished:
        _stop(out, interrupt)
        if out.error is not None or not out.done.is_set():
            raise SqlTimeout(timeout or 0.0, fix) from None
    if out.error is not None:
        raise out.error
    return out.value  # type: ignore[return-value]  # set when no error was


def _stop(out: _Outcome[T], interrupt: Callable[[], None]) -> None:
    """Interrupt until the worker is out (or ``_GRACE_S`` passed: it is left, a daemon)."""
    deadline = time.monotonic() + _GRACE_S
    while True:
        interrupt()
        if out.done.wait(_POLL_S) or time.monotonic() > deadline:
            return
