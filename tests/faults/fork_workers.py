"""A Recorder made before ``fork()``, used by forked workers (gunicorn ``--preload``).

    python fork_workers.py STORE WORKERS RUNS

The parent makes one Recorder over a ParquetSink and answers one question
itself, then forks WORKERS children; each answers RUNS questions with a real
Agent (a deterministic model) recording into the inherited Recorder, then
exits with ``sys.exit`` (the recorder closes at exit, as in a gunicorn
worker). Prints ``answered <run_id>`` for every answer, from every process.
"""

from __future__ import annotations

import os
import sys

from footprint import Agent, FunctionModel, StepClock
from recorder import ParquetSink, Recorder


def _answer(recorder: Recorder, who: str) -> None:
    agent = Agent(provider=FunctionModel(lambda _: f"ok from {who}"), model="m",
                  clock=StepClock(), sink=recorder)
    os.write(1, f"answered {agent.run_sync('hello').run_id}\n".encode())  # one write a line


def main(store: str, workers: int, runs: int) -> None:
    recorder = Recorder([ParquetSink(store)])
    _answer(recorder, "parent")  # the parent's own buffer, written by the parent
    children = []
    for w in range(workers):
        pid = os.fork()
        if pid == 0:
            for _ in range(runs):
                _answer(recorder, f"worker {w}")
            sys.exit(0)  # atexit closes the recorder, as when a worker ends
        children.append(pid)
    failed = [pid for pid in children if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])]
    recorder.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
