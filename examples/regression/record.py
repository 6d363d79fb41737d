"""Record the support-desk conversation and snapshot it next to this file.

Run ``python examples/regression/record.py`` (or give an output folder).

Two turns: the angry customer's refund request, then a follow-up asking for
the decision again. The agent is reproducible (a step clock, a fixed seed
and seeded run ids), so recording again writes the same files. The conversation is
recorded into a temporary store, then ``footprint snapshot`` writes the
folder ``support_desk/`` and ``test_support_desk.py`` next to this file.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from footprint import SeededIds
from lens._examples.support_desk import DEFAULT_SEED, make_agent
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder

HERE = Path(__file__).resolve().parent
AGENT = "lens._examples.support_desk:make_agent"
FOLLOW_UP = "Sorry, I missed it: what did you decide about my refund?"


def record(out: Path = HERE) -> int:
    """Record the conversation and snapshot it into ``out``; the CLI's exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        recorder = Recorder(sinks=[ParquetSink(Path(tmp) / "store")])
        try:
            desk = make_agent(sink=recorder, ids=SeededIds(DEFAULT_SEED))
            desk.answer()
            desk.follow_up_sync(FOLLOW_UP)
        finally:
            recorder.close()
        return footprint(["snapshot", "last", "--agent", AGENT, "-o", str(out),
                          "--name", "support_desk", "--store", str(Path(tmp) / "store")])


if __name__ == "__main__":
    sys.exit(record(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))
