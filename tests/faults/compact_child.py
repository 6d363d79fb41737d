"""A compactor server for the compaction fault tests: one real, forked compactor a request.

    python compact_child.py

Reads requests from stdin, one a line: ``STORE KILL_AT LOG``. For each it forks
a compactor that runs ``compact(STORE)`` (``recorder.write._compact``) with each
file-system step it takes counted: ``os.fsync``, ``os.replace`` and ``os.unlink``.
Every step is appended to LOG (``<n> fsync <inode>`` / ``<n> replace <path>`` /
``<n> unlink <path>``) before it runs; before step KILL_AT (1-based; 0 never)
the compactor SIGKILLs itself, so every crash point of the sequence is
addressable. Prints ``pid <pid>`` once forked (the test may SIGKILL it at any
moment instead) and ``done <wait status> <steps taken>`` once it is reaped.
The imports are paid once, here; a fork costs milliseconds.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from typing import Any

from recorder.write._compact import compact


def _hooked(kill_at: int, log: str) -> None:
    """Count (and log) every fsync, replace and unlink; die before step ``kill_at``."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    steps = [0]

    def step(op: str, what: object) -> None:
        steps[0] += 1
        if steps[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        os.write(fd, f"{steps[0]} {op} {what}\n".encode())

    fsync, replace, unlink = os.fsync, os.replace, os.unlink

    def hooked_fsync(file: Any) -> None:
        step("fsync", os.fstat(file).st_ino)
        fsync(file)

    def hooked_replace(src: Any, dst: Any, **kw: Any) -> None:
        step("replace", os.fspath(dst))
        replace(src, dst, **kw)

    def hooked_unlink(path: Any, **kw: Any) -> None:
        step("unlink", os.fspath(path))
        unlink(path, **kw)

    os.fsync, os.replace, os.unlink = hooked_fsync, hooked_replace, hooked_unlink  # type: ignore[assignment]
    os.write(fd, b"")


def _serve_one(store: str, kill_at: int, log: str) -> None:
    pid = os.fork()
    if pid == 0:  # the compactor
        code = 0
        try:
            _hooked(kill_at, log)
            compact(store)
        except BaseException:
            traceback.print_exc()
            code = 1
        os._exit(code)
    print(f"pid {pid}", flush=True)
    _, status = os.waitpid(pid, 0)
    try:
        with open(log, encoding="utf-8") as file:
            steps = sum(1 for _ in file)
    except FileNotFoundError:  # killed before its hooks made the log: no step begun
        steps = 0
    print(f"done {os.waitstatus_to_exitcode(status)} {steps}", flush=True)


def main() -> None:
    for line in sys.stdin:
        store, kill_at, log = line.split()
        _serve_one(store, int(kill_at), log)


if __name__ == "__main__":
    main()
