"""A writer SIGKILLed at one exact point: after it appended a batch holding a ``run.end``,
before it appended that batch's chain heads (the crash a chain must not read as a tamper).

    python stopped_writer_child.py STORE

Today's writer stores a batch's heads before its rows (a kill between them stores nothing
of the batch); the writers before it stored the rows first, and their stores still hold
such runs: the child writes in that older order (:func:`_rows_first`), as they did.

Writes run ``stopped`` (a first batch, headed), run ``whole`` (complete, headed), then the
batch that ends ``stopped``: the process kills itself (SIGKILL, no cleanup of any kind)
when that batch's heads are about to be written. Prints nothing; exits by the signal.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from footprint.events import Event, RunEnd, RunStart, ToolEnd
from recorder import ParquetSink
from recorder.write import _segment

T0 = 1_767_225_600_000_000_000


def events(run_id: str, first: int, last: int, *, end: bool) -> list[Event]:
    out: list[Event] = [RunStart(run_id=run_id, seq=0, ts=T0, user_message="refund?")] \
        if first == 0 else []
    out += [ToolEnd(run_id=run_id, seq=s, ts=T0 + s, tool_call_id=f"c{s}",
                    tool_name="lookup", result=f"r{s}") for s in range(max(first, 1), last)]
    if end:
        out.append(RunEnd(run_id=run_id, seq=last, ts=T0 + last, final_content="no refund"))
    return out


def _rows_first() -> None:
    """Append as the writers before heads came first did: blobs, rows, then heads."""

    def append(self: Any, events: Any, blobs: Any, heads: Any = ()) -> None:
        if blobs is not None:
            self.blobs.write(blobs)
        if events.num_rows:
            self.events.write(events)
            self.rows += events.num_rows
            self._days.add(events)
        if heads:
            self.chain.write(self._chain_batch(heads))

    _segment.Segment.append = append  # type: ignore[method-assign]


def _arm() -> None:
    """Kill this process the moment a chain head is about to follow a batch with a run.end."""
    write = _segment._Stream.write
    ended = False

    def killing(self: Any, data: Any) -> None:
        nonlocal ended
        if self.path.name.endswith(".events.arrows"):
            ended = "run.end" in data.column("type").to_pylist()
        elif self.path.name.endswith(".chain.arrows") and ended:
            os.kill(os.getpid(), signal.SIGKILL)
        write(self, data)

    _segment._Stream.write = killing  # type: ignore[method-assign]


def main(store: str) -> None:
    _rows_first()
    sink = ParquetSink(store)
    sink.export(events("stopped", 0, 5, end=False))
    sink.export(events("whole", 0, 6, end=True))
    assert sink.force_flush()
    _arm()
    sink.export(events("stopped", 5, 9, end=True))
    sink.force_flush()
    raise SystemExit("not killed: the batch with run.end was written with its heads")


if __name__ == "__main__":
    main(sys.argv[1])
