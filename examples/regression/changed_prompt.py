"""The same desk with one sentence added to its system prompt: its replay fails, on purpose.

``pytest examples/regression/changed_prompt.py`` runs two tests against the
recording in ``support_desk/``:

- the exact replay FAILS: the changed prompt changes the first model
  request, and the report names the first divergent decision (the system
  prompt piece injected with another content hash) and the request diff
  (``system prompt: first differs at character …`` with both excerpts);
- the decision snapshot PASSES: the desk still routes, injects, calls the
  same tools and gives the same answer, so the change is harmless at the
  level of decisions. Accept it by recording again (``record.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from footprint import Agent, EventSink
from lens._examples.support_desk import SYSTEM_PROMPT, make_agent
from lens.pytest_plugin import FootprintReplay

RECORDING = Path(__file__).parent / "support_desk"
EXTRA = " Keep every answer to one sentence."


def make_changed_agent(sink: EventSink | None = None) -> Agent:
    """The support desk with :data:`EXTRA` appended to its system prompt."""
    return make_agent(sink=sink).variant(system_prompt=SYSTEM_PROMPT + EXTRA)


def test_the_changed_prompt_replays_decision_for_decision(
        footprint_replay: FootprintReplay) -> Any:
    footprint_replay.assert_replays(RECORDING, make_changed_agent)


def test_the_changed_prompt_keeps_the_recorded_decisions(
        footprint_replay: FootprintReplay) -> Any:
    footprint_replay.assert_decisions(RECORDING, make_changed_agent)
