"""A child process for the write-side fault tests (real processes, real signals).

    python faults_write_child.py STORE sealing RUNS   # short runs beside one long open run,
                                                      # sealing every ~100 rows; prints
                                                      # "ended <run_id>" after each flush
    python faults_write_child.py STORE orphan N       # N flushed events of one open run,
                                                      # prints "flushed", then waits to be killed
"""

from __future__ import annotations

import os
import sys
import time

from footprint.events import Event, RunEnd, RunStart, ToolEnd
from recorder import ParquetSink, Recorder


def _event(run_id: str, seq: int, *, end: bool = False) -> Event:
    ts = time.time_ns()
    if seq == 0:
        return RunStart(run_id=run_id, seq=0, ts=ts, user_message=f"question for {run_id}")
    if end:
        return RunEnd(run_id=run_id, seq=seq, ts=ts, final_content="the answer " * 40)
    return ToolEnd(run_id=run_id, seq=seq, ts=ts, tool_call_id=f"c{seq}", tool_name="lookup",
                   result=("order history " * 30) if seq % 4 == 0 else f"ok {seq}")


def sealing(store: str, runs: int) -> None:
    rec = Recorder([ParquetSink(store, seal_rows=100)])
    prefix = str(os.getpid())
    rec.emit(_event(f"{prefix}-open", 0))
    for r in range(runs):
        run_id = f"{prefix}-short-{r:04d}"
        for seq in range(40):
            rec.emit(_event(run_id, seq, end=seq == 39))
            rec.emit(_event(f"{prefix}-open", 1 + r * 40 + seq))
        rec.flush()
        print(f"ended {run_id}", flush=True)
    rec.close()


def orphan(store: str, n: int) -> None:
    rec = Recorder([ParquetSink(store)])
    for seq in range(n):
        rec.emit(_event("orphan-run", seq))
    assert rec.flush()
    print("flushed", flush=True)
    time.sleep(60)  # the test SIGKILLs us long before this ends


if __name__ == "__main__":
    mode = sys.argv[2]
    if mode == "sealing":
        sealing(sys.argv[1], int(sys.argv[3]))
    else:
        orphan(sys.argv[1], int(sys.argv[3]))
