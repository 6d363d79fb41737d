"""``flush()`` says so when events were dropped: ``False`` after drops since the last flush.

A sink held busy (its export waits on an event) lets the buffer fill; the
events past it are dropped and counted, and the next ``flush()`` is
``False``; a flush with no drop since is ``True`` again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from footprint.events import EventBase, RunStart, ToolEnd
from recorder import Recorder
from recorder.write._sink import ExportResult


class HeldSink:
    """Takes batches, but the first export waits until ``release`` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.taken = 0

    def export(self, batch: Sequence[EventBase]) -> ExportResult:
        self.entered.set()
        self.release.wait(30)
        self.taken += len(batch)
        return ExportResult.SUCCESS

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    def shutdown(self) -> None:
        self.release.set()


def _event(seq: int) -> EventBase:
    if seq == 0:
        return RunStart(run_id="burst", seq=0, ts=1, user_message="q")
    return ToolEnd(run_id="burst", seq=seq, ts=1 + seq, tool_call_id=f"c{seq}",
                   tool_name="t", result="r")


def test_given_drops_on_a_full_buffer_when_flushed_then_false_and_true_again_after(
) -> None:
    sink = HeldSink()
    rec = Recorder([sink], capacity=8, batch_size=4)
    try:
        rec.emit(_event(0))
        assert sink.entered.wait(10)  # the writer is inside export, held
        for seq in range(1, 40):
            rec.emit(_event(seq))
        assert rec.stats().overflow > 0
        sink.release.set()
        assert rec.flush() is False  # events were dropped since the last flush
        rec.emit(_event(100))
        assert rec.flush() is True  # none since
        assert sink.taken == 40 - rec.stats().overflow + 1
    finally:
        rec.close()
