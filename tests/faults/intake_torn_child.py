"""An intake SIGKILLed between the two appends of one batch of its writer: after the first
of (rows, heads) of the first batch that ends a run, before the second — the point a
receiver killed under load lands on now and then (the window spans the Parquet encoding of
the batch).

    python intake_torn_child.py STORE N

Takes N agent traces in one OTLP batch (stored raw, pending), maps them, and waits for
the writer; the process kills itself (SIGKILL, no cleanup) at that point. Exits by the
signal; prints nothing.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from otlp_build import agent_trace, trace_request

from recorder.ingest import Intake
from recorder.write import _segment


def _arm() -> None:
    """Kill this process at the second stream write of the first append holding a run.end."""
    append = _segment.Segment.append

    def torn(self: Any, events: Any, blobs: Any, heads: Any = ()) -> None:
        if "run.end" not in events.column("type").to_pylist():
            return append(self, events, blobs, heads)
        write, written = _segment._Stream.write, []

        def once(stream: Any, data: Any) -> None:
            if stream.path.name.endswith((".events.arrows", ".chain.arrows")):
                if written:
                    os.kill(os.getpid(), signal.SIGKILL)
                written.append(stream.path.name)
            write(stream, data)

        _segment._Stream.write = once  # type: ignore[method-assign]
        append(self, events, blobs, heads)

    _segment.Segment.append = torn  # type: ignore[method-assign]


def main(store: str, n: int) -> None:
    _arm()
    intake = Intake(store)
    body = trace_request([s for k in range(1, n + 1) for s in agent_trace(k, calls=2)])
    intake.take(body.SerializeToString(), signal="traces", fmt="pb")
    intake.flush()
    raise SystemExit("not killed: the batch was written whole")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
