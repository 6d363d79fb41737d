"""A lone surrogate (``"\\ud800"``: legal in JSON, never valid UTF-8) in the person's
message or in the model's answer: the run succeeds, the answer comes back as the model
said it, and the store keeps the text in its documented escaped form (``\\ud800``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from footprint.agent import Agent, StepClock
from footprint.events import LLMStart, RunEnd, RunStart
from footprint.providers import ScriptedModel
from recorder import ParquetSink, Recorder, open_store, verify_run

CASES = {
    # where the surrogate is: (the person's message, the model's answer)
    "message": ("look up \ud800 please", "found it"),
    "answer": ("look it up", "found \udfff it"),
}


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.mark.parametrize("where", sorted(CASES))
def test_given_a_lone_surrogate_when_the_run_is_recorded_then_it_succeeds_and_is_kept_escaped(
    tmp_path: Path, where: str,
) -> None:
    message, answer = CASES[where]
    root = tmp_path / "store"
    with Recorder([ParquetSink(root)]) as rec:
        result = Agent(provider=ScriptedModel([answer]), model="m", sink=rec,
                       clock=StepClock()).run_sync(message)
    assert result.answer == answer  # the caller gets what the model said
    store = open_store(root)
    assert verify_run(store, result.run_id).valid
    events = store.events(result.run_id)
    start = next(e for e in events if isinstance(e, RunStart))
    end = next(e for e in events if isinstance(e, RunEnd))
    assert (start.user_message, end.final_content) == (_escaped(message), _escaped(answer))
    llm = next(e for e in events if isinstance(e, LLMStart))
    assert len(llm.request_hash) == 64
