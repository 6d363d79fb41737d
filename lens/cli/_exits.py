"""Exit codes of the ``footprint`` command, and the guard that turns every failure
into one line on stderr and one of them (never a traceback)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator

__all__ = ["BROKEN_PIPE", "BUG", "EXIT_CODES", "FINDING", "INCOMPLETE", "INTERRUPTED", "OK",
           "SYSTEM", "USAGE", "epilog", "guarded", "own_interrupts", "say", "short_epilog"]

OK = 0
FINDING = 1
USAGE = 2
SYSTEM = 3
INCOMPLETE = 4
BUG = 70
INTERRUPTED = 130
BROKEN_PIPE = 141

GRACE_S = 1.5  # how long Ctrl-C may wait for the main thread before the command ends anyway
SEEN_S = 0.2  # on a failure, how long to wait for word of a Ctrl-C that may have caused it

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (OK, "success"),
    (FINDING, "the command ran and found a problem (verify: a broken chain; replay: a "
              "divergence; graph: errors; evaluate: the judge raised on some runs)"),
    (USAGE, "bad input: arguments, an unknown run, a refused or failing query, a bad store"),
    (SYSTEM, "the system refused: a file or directory could not be read or written"),
    (INCOMPLETE, "verify: the run's writer died before sealing its last batch (a crash, "
                 "not a tamper; those records are not proven)"),
    (BUG, "an internal error (please report it; FOOTPRINT_DEBUG=1 prints the traceback)"),
    (INTERRUPTED, "interrupted (Ctrl-C, SIGINT)"),
    (BROKEN_PIPE, "the output was closed early (e.g. `| head`); nothing more is printed"),
)


def epilog() -> str:
    """The exit codes, for ``--help``."""
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)


def short_epilog() -> str:
    """The exit codes in one sentence, for each command's ``--help``."""
    return ("exit codes: 0 ok, 1 a problem found, 2 bad input, 3 a file or directory refused, "
            "70 internal error, 130 interrupted, 141 output closed, 4 (verify) a writer died "
            "before sealing (see `footprint --help`)")


def say(line: str) -> None:
    """One line on stderr; a closed stderr is ignored."""
    text = " ".join(line.split("\n"))
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _from_store_engine(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.split(".")[0] in ("duckdb", "_duckdb", "pyarrow")


def _report(prefix: str, exc: Exception) -> int:
    from footprint._errors import FootprintError

    if isinstance(exc, FootprintError):
        say(f"{prefix} {exc}")
        return USAGE
    if isinstance(exc, ModuleNotFoundError) and _missing_dependency(exc):
        say(f"{prefix} this install lacks the package {exc.name!r} (a record-only install?); "
            "`pip install footprint-lens` installs what every command needs")
        return SYSTEM
    if isinstance(exc, OSError):
        where = f" {exc.filename!r}" if exc.filename else ""
        say(f"{prefix} cannot use{where}: {exc.strerror or _first_line(exc)}")
        return SYSTEM
    if _from_store_engine(exc):
        say(f"{prefix} the store could not be read: {_first_line(exc)}")
        return SYSTEM
    if os.environ.get("FOOTPRINT_DEBUG"):
        traceback.print_exc()
    say(f"{prefix} internal error ({type(exc).__name__}: {_first_line(exc)}); please report "
        "it — FOOTPRINT_DEBUG=1 prints the traceback")
    return BUG


def _missing_dependency(exc: ModuleNotFoundError) -> bool:
    """A third-party package is missing (a record-only install), not one of our modules."""
    return bool(exc.name) and str(exc.name).split(".")[0] not in ("footprint", "recorder", "lens")


_OWNED = threading.Event()
"""Set while a command handles Ctrl-C itself (:func:`own_interrupts`)."""


@contextlib.contextmanager
def own_interrupts() -> Iterator[None]:
    """While the block runs, a Ctrl-C is the command's to handle (``evaluate`` finishes the
    judges running and writes their scores): the guard's watcher does not end the process
    after ``GRACE_S``."""
    _OWNED.set()
    try:
        yield
    finally:
        _OWNED.clear()


def _watch_interrupts(prefix: str, handled: threading.Event, seen: threading.Event) -> None:
    """Make Ctrl-C end the command even when Python cannot see it in time.

    Python turns SIGINT into ``KeyboardInterrupt`` only when the main thread
    runs Python code; inside native code (a long DuckDB query) it waits. The
    signal's wakeup byte reaches this thread at once: if the main thread has
    not handled the interrupt ``GRACE_S`` later, say so and exit 130 here.
    """
    try:
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (ValueError, OSError):  # not the main thread, or no pipe to spare
        return

    def watch() -> None:
        while signal.SIGINT not in os.read(read_end, 64) or _OWNED.is_set():
            pass
        seen.set()
        if not handled.wait(GRACE_S):
            say(f"{prefix} interrupted")
            os._exit(INTERRUPTED)

    threading.Thread(target=watch, name="footprint-interrupt", daemon=True).start()


class _OnInterrupt:
    """The SIGINT handler while ``footprint`` owns the process: ``KeyboardInterrupt``
    while the command runs, then (during shutdown) the one line and exit 130 at once."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.running = prefix, True

    def __call__(self, signum: int, frame: object) -> None:
        if self.running:
            raise KeyboardInterrupt
        say(f"{self.prefix} interrupted")
        os._exit(INTERRUPTED)


def _interrupted(prefix: str, handled: threading.Event) -> int:
    handled.set()
    warnings.filterwarnings("ignore")  # e.g. a coroutine the interrupt left unawaited
    say(f"{prefix} interrupted")
    return INTERRUPTED


def guarded(command: str, body: Callable[[], int], *, owns_process: bool = False) -> int:
    """``body()``'s exit code; every failure becomes one line and a code of ``EXIT_CODES``.

    ``owns_process`` (the ``footprint`` executable, not a caller's
    ``main([...])``): Ctrl-C also ends a command stuck in native code, and once
    ``body`` is over a further Ctrl-C ends the process at once with the same
    line, so the interpreter's shutdown cannot turn it into a traceback.
    """
    prefix = f"footprint {command}:" if command else "footprint:"
    handled, seen = threading.Event(), threading.Event()
    on_interrupt = _OnInterrupt(prefix)
    try:
        if owns_process:
            signal.signal(signal.SIGINT, on_interrupt)
            _watch_interrupts(prefix, handled, seen)
        return body()
    except KeyboardInterrupt:
        return _interrupted(prefix, handled)
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE
    except Exception as exc:
        # a library may wrap the KeyboardInterrupt (DuckDB inside an Arrow scan does)
        if owns_process and seen.wait(SEEN_S):
            return _interrupted(prefix, handled)
        return _report(prefix, exc)
    finally:
        on_interrupt.running = False
        handled.set()
