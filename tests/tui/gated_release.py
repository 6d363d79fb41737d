"""Release 1.1 of the helpdesk whose model answers only once a gate file exists.

``release_changed`` is ``examples/release_regression.py``'s, its model held at
each call until the file named by ``$FOOTPRINT_TEST_GATE`` exists (at most 60 s):
a test holds the lens's explanation of a regression (which re-runs this agent)
open for as long as it needs, without sleeping for a guessed time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from lens_data_support import example

from footprint import Agent, FunctionModel
from footprint.events import EventSink
from footprint.providers import LLMRequest


def _gated(request: LLMRequest) -> str:
    gate = Path(os.environ["FOOTPRINT_TEST_GATE"])
    deadline = time.monotonic() + 60
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    reply: str = example()._reply(request)
    return reply


def release_changed(sink: EventSink | None = None) -> Agent:
    agent: Agent = example().release_changed(sink)
    return agent.variant(provider=FunctionModel(_gated, name="helpdesk"))
