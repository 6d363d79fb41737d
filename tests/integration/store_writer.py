"""A child process that records synthetic runs into a store (used by the crash and
concurrency tests). Prints ``flushed <run_id> <last_seq>`` after every flush.

    python store_writer.py STORE RUN_PREFIX RUNS EVENTS_PER_RUN FLUSH_EVERY SEAL_ROWS [--no-end]
"""

from __future__ import annotations

import sys
import time

from footprint.events import ContextInjected, Event, RunEnd, RunStart, SkillRejected, ToolEnd
from recorder import ParquetSink, Recorder


def event(run_id: str, seq: int, last: int, end: bool) -> Event:
    ts = time.time_ns()
    if seq == 0:
        return RunStart(run_id=run_id, seq=0, ts=ts, user_message=f"question for {run_id}")
    if seq == last and end:
        return RunEnd(run_id=run_id, seq=seq, ts=ts, final_content="the answer")
    if seq % 3 == 0:
        return SkillRejected(run_id=run_id, seq=seq, ts=ts, iteration=seq // 10,
                             requested_id="billing", reason="unreachable", allowed=("triage",))
    if seq % 3 == 1:
        return ContextInjected(run_id=run_id, seq=seq, ts=ts, iteration=seq // 10,
                               slot="system-prompt", source="fact", content_hash=f"h{seq % 7}",
                               content_summary="a fact", reason="always", admitted_via="always",
                               injection_id=f"fact-{seq % 7}")
    return ToolEnd(run_id=run_id, seq=seq, ts=ts, iteration=seq // 10, tool_call_id=f"c{seq}",
                   tool_name="lookup", result=("order history " * 40) if seq % 5 == 0 else "ok")


def main(argv: list[str]) -> None:
    store, prefix, runs, per_run, flush_every, seal_rows = argv[:6]
    end = "--no-end" not in argv
    rec = Recorder([ParquetSink(store, seal_rows=int(seal_rows))], capacity=1 << 20)
    for r in range(int(runs)):
        run_id = f"{prefix}-{r:03d}"
        last = int(per_run) - 1
        for seq in range(int(per_run)):
            rec.emit(event(run_id, seq, last, end))
            if (seq + 1) % int(flush_every) == 0:
                rec.flush()
                print(f"flushed {run_id} {seq}", flush=True)
    rec.close()
    print("closed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
