"""Event-codec figures: the cost of turning one event into a record and back.

``to_record`` runs on the recorder's background thread for every event, so
it must stay cheap. Target: ``to_record_typical_us`` < 10 µs.

- ``to_record_typical_us``: median µs over a typical mix (a ``context.injected``,
  an ``llm.start``, a ``tool.end``, a ``skill.activated``).
- ``to_record_evaluated_us``: a ``context.evaluated`` with a cursor move,
  guard evidence, skipped injections and a skill catalog (a heavy event).
- ``from_record_typical_us``: median µs to rebuild the typical mix.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from footprint.events import (
    CatalogEntry,
    ConditionEvidence,
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    GuardRecord,
    KindCount,
    LLMStart,
    SkillActivated,
    SkippedInjection,
    ToolEnd,
    from_record,
    to_record,
)

ENVELOPE: dict[str, Any] = {
    "run_id": "0190f3a2-7c1e-7b8a-9d2c-5e4f3a2b1c0d", "seq": 42,
    "ts": 1_760_000_000_000_000_000, "turn": 0, "iteration": 3, "step_id": "engine#3",
}


def typical_events() -> list[Event]:
    """Four everyday events, as the host emits them."""
    return [
        ContextInjected(
            **ENVELOPE, slot="system-prompt", source="skill", content_hash="9f" * 32,
            content_summary="Refund policy: refunds over 100 need a manager", reason="cursor",
            admitted_via="cursor", injection_id="refund", admitted_by=40, position=2,
        ),
        LLMStart(
            **ENVELOPE, provider="openai", model="gpt-4o-mini", request_hash="ab" * 32,
            system_prompt_chars=1834, messages_count=6, tools_count=4,
            tool_names=("lookup", "refund", "read_skill", "escalate"),
        ),
        ToolEnd(
            **ENVELOPE, tool_call_id="call_7", tool_name="lookup",
            result='{"order": 17, "amount": 250}', status="success", duration_ms=12.5,
        ),
        SkillActivated(**ENVELOPE, skill_id="refund", reason="route", evidence_seq=39,
                       evidence_step="tool#call_7"),
    ]


def heavy_event() -> ContextEvaluated:
    """One rich ``context.evaluated``: 12 active, 3 skipped, a guarded cursor move."""
    guard = GuardRecord(
        from_skill="triage", to="refund", tool_name="lookup", verdict=True,
        conditions=tuple(
            ConditionEvidence(key=f"k{i}", op="gt", value=i, actual_summary=str(i + 1), passed=True)
            for i in range(3)
        ),
        tool_call_id="call_7",
    )
    return ContextEvaluated(
        **ENVELOPE, active_count=12, skipped_count=3, evaluated_total=15,
        active_ids=tuple(f"inj_{i}" for i in range(12)),
        skipped=tuple(SkippedInjection(id=f"off_{i}", reason="parked") for i in range(3)),
        trigger_kind_counts=(KindCount(kind="always", count=4), KindCount(kind="rule", count=8)),
        skill_catalog=tuple(CatalogEntry(id=f"s{i}", description=f"skill {i}") for i in range(6)),
        cursor_move=CursorMove(by="route", from_skill="triage", to="refund", guard=guard,
                               reachable=("close", "escalate")),
    )


def _median_us(fn: Callable[[Any], object], items: Sequence[Any], rounds: int) -> float:
    samples: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        for item in items:
            fn(item)
        samples.append((time.perf_counter() - started) / len(items) * 1e6)
    return statistics.median(samples)


def figures(quick: bool) -> dict[str, float]:
    """Median microseconds per event for the codec's hot paths."""
    rounds = 200 if quick else 2000
    typical = typical_events()
    records = [to_record(e) for e in typical]
    heavy = [heavy_event()]
    return {
        "to_record_typical_us": round(_median_us(to_record, typical, rounds), 3),
        "to_record_evaluated_us": round(_median_us(to_record, heavy, rounds), 3),
        "from_record_typical_us": round(_median_us(from_record, records, rounds), 3),
    }


if __name__ == "__main__":
    print(figures(quick=False))
