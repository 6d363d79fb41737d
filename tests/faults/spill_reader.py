"""A reader that spills a live stream, prints its spill folder, then waits to be killed.

    python spill_reader.py LIVE_STREAM
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from recorder.store._livespill import LiveSpill
from recorder.write._rows import EVENT_SCHEMA

if __name__ == "__main__":
    spill = LiveSpill(keep_rows=1)
    _, spilled = spill.read(Path(sys.argv[1]), EVENT_SCHEMA)
    assert spilled is not None
    print(spilled.parent, flush=True)
    time.sleep(120)  # the test SIGKILLs us long before this ends
