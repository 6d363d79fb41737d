"""User patterns reach every text the engine stores: its 80-character evidence cuts, and ids.

An e-mail address and a card number cut in two by the engine's evidence
cuts (a guard's ``actual_summary``, a matcher's witness), and a secret in a
tool-call id (which the engine turns into ``step_id``), appear in no byte
of the store once a :class:`Redactor` with those patterns records the run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from store_bytes import every_byte

from footprint.agent import Agent, StepClock, tool
from footprint.events import (
    ConditionEvidence,
    ContextEvaluated,
    CursorMove,
    GuardRecord,
    TurnRouted,
)
from footprint.graph._guards import summarize_actual
from footprint.graph._matchers import make_witness
from footprint.providers import ScriptedModel, ToolCall
from recorder import ParquetSink, Recorder, Redactor

EMAIL = "jane.q.doe-1984@example-mail.com"
CARD = "4111 1111 1111 1111"
PATTERNS = (r"[\w.+-]+@[\w-]+\.[\w.]+", r"\b(?:\d{4}[ -]?){3}\d{4}\b")
SECRET_ID = "call-" + EMAIL


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _fragments(secret: str, size: int = 6) -> list[bytes]:
    return [secret[i:i + size].encode() for i in range(len(secret) - size + 1)]


def _record(root: Path, processors: list[Redactor]) -> None:
    model = ScriptedModel([ToolCall(id=SECRET_ID, name="lookup", arguments={"order": "A-1"}),
                           "Done."])
    # the engine's own cuts, with the secret running into them
    lead = "the customer wrote: please refund to card ".ljust(66, ".")
    actual = summarize_actual({"note": lead[:40] + " " + EMAIL})
    witness = make_witness(lead + " " + CARD)
    assert actual.endswith("…") and witness.endswith("…")
    with Recorder([ParquetSink(root)], processors) as rec:
        agent = Agent(provider=model, model="m", tools=[tool(lookup)], sink=rec,
                      clock=StepClock())
        run = agent.run_sync("Where is my order?").run_id
        guard = GuardRecord(from_skill="a", to="b", tool_name="lookup", verdict=False,
                            conditions=(ConditionEvidence(key="note", op="eq", value="x",
                                                          actual_summary=actual,
                                                          passed=False),))
        rec.emit(ContextEvaluated(run_id=run, seq=9_000, ts=1, active_count=0, skipped_count=0,
                                  evaluated_total=0,
                                  cursor_move=CursorMove(by="none", guards_closed=(guard,))))
        rec.emit(TurnRouted(run_id=run, seq=9_001, ts=2, by="none", witness=witness))


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "control"])
def test_given_secrets_in_evidence_cuts_and_a_tool_call_id_when_recorded_then_none_leaks(
    tmp_path: Path, redact: bool,
) -> None:
    root = tmp_path / "store"
    _record(root, [Redactor(patterns=PATTERNS)] if redact else [])
    stored = every_byte(root)
    leaked = [f for s in (EMAIL, CARD) for f in _fragments(s) if f in stored]
    if redact:
        assert leaked == [], leaked[:5]
    else:  # the control: without the patterns the pieces are there to find
        assert leaked
