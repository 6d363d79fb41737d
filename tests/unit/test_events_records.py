"""Events to flat records and back: lossless, JSON-safe, and strict about bad input."""

from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import events, events_of, run_streams

from footprint import ConfigError
from footprint.events import (
    ENVELOPE_FIELDS,
    EVENT_TYPES,
    SUMMARY_LIMIT,
    ConditionEvidence,
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    GuardRecord,
    KindCount,
    LLMEnd,
    RunConfigured,
    RunStart,
    SkillRejected,
    SkippedInjection,
    ToolStart,
    TurnRouted,
    from_record,
    payload_of,
    summarize_content,
    to_record,
)
from footprint.providers import ToolCall

ENVELOPE: dict[str, Any] = {
    "run_id": "r1", "seq": 4, "ts": 1_700_000_000_000_000_000, "iteration": 2
}


def _evaluated() -> ContextEvaluated:
    guard = GuardRecord(
        from_skill="triage", to="refund", tool_name="lookup", verdict=True,
        conditions=(ConditionEvidence(
            key="amount", op="gt", value=[100, {"cap": 5.5}], actual_summary="250", passed=True
        ),),
        tool_call_id="call_1",
    )
    return ContextEvaluated(
        **ENVELOPE, active_count=1, skipped_count=1, evaluated_total=2,
        active_ids=("refund",),
        skipped=(SkippedInjection(id="vip", reason="predicate-threw", error="KeyError: 'x'"),),
        trigger_kind_counts=(KindCount(kind="llm-activated", count=1),),
        cursor_move=CursorMove(by="route", from_skill="triage", to="refund", guard=guard,
                               reachable=("close",)),
    )


def _roundtrip_via_json(event: Event) -> Event:
    return from_record(json.loads(json.dumps(to_record(event), allow_nan=False)))


@pytest.mark.parametrize(("tag", "cls"), sorted(EVENT_TYPES.items()))
@given(data=st.data())
def test_given_any_event_of_each_type_when_recorded_and_rebuilt_then_it_is_equal(
    tag: str, cls: type[Event], data: st.DataObject
) -> None:
    event = data.draw(events_of(cls))
    assert from_record(to_record(event)) == event
    rebuilt = _roundtrip_via_json(event)
    assert rebuilt == event
    assert type(rebuilt) is cls and rebuilt.type == tag


@given(event=events())
def test_given_any_event_when_recorded_then_the_record_is_flat_strict_json(event: Event) -> None:
    record = to_record(event)
    text = json.dumps(record, allow_nan=False)
    assert list(record) == [f.name for f in dataclasses.fields(event)]
    assert set(ENVELOPE_FIELDS) <= set(record)
    assert json.loads(text)["type"] == event.type


@given(event=events())
def test_given_any_event_when_its_payload_is_taken_then_it_is_the_record_minus_envelope(
    event: Event,
) -> None:
    record = to_record(event)
    assert payload_of(event) == {k: v for k, v in record.items() if k not in ENVELOPE_FIELDS}


@given(stream=run_streams(max_size=8))
def test_given_a_run_stream_when_rebuilt_then_order_and_seq_survive(stream: list[Event]) -> None:
    rebuilt = [from_record(to_record(e)) for e in stream]
    assert rebuilt == stream
    assert [e.seq for e in rebuilt] == list(range(len(stream)))
    assert len({e.run_id for e in rebuilt}) == 1


def test_given_nested_evidence_when_recorded_then_dicts_and_lists_replace_objects() -> None:
    record = to_record(_evaluated())
    assert record["active_ids"] == ["refund"]
    assert record["skipped"] == [
        {"id": "vip", "reason": "predicate-threw", "error": "KeyError: 'x'"}
    ]
    move = record["cursor_move"]
    assert isinstance(move, dict) and move["reachable"] == ["close"]
    assert move["guard"]["conditions"][0]["value"] == [100, {"cap": 5.5}]  # type: ignore[index,call-overload]
    assert "payload" not in record and record["iteration"] == 2


def test_given_a_record_when_rebuilt_then_tuples_and_nested_classes_are_exact() -> None:
    rebuilt = from_record(to_record(_evaluated()))
    assert isinstance(rebuilt, ContextEvaluated)
    assert isinstance(rebuilt.active_ids, tuple)
    assert isinstance(rebuilt.skipped[0], SkippedInjection)
    assert rebuilt.cursor_move is not None and rebuilt.cursor_move.guard is not None
    assert isinstance(rebuilt.cursor_move.guard.conditions, tuple)
    assert rebuilt.cursor_move.reachable == ("close",)


def test_given_model_tool_calls_when_recorded_then_arguments_become_plain_json() -> None:
    event = LLMEnd(
        **ENVELOPE, content="", response_hash="h",
        tool_calls=(ToolCall(id="call_1", name="lookup",
                             arguments=MappingProxyType({"ids": (1, 2)})),),
    )
    record = to_record(event)
    assert record["tool_calls"] == [
        {"id": "call_1", "name": "lookup", "arguments": {"ids": [1, 2]}}
    ]
    rebuilt = from_record(record)
    assert isinstance(rebuilt, LLMEnd) and rebuilt.tool_calls[0].arguments == {"ids": [1, 2]}


def test_given_store_columns_as_json_text_when_rebuilt_then_structures_are_decoded() -> None:
    record: dict[str, Any] = dict(to_record(_evaluated()))
    for name in ("skipped", "cursor_move", "active_ids"):
        record[name] = json.dumps(record[name])
    assert from_record(record) == _evaluated()


def test_given_a_wide_store_row_when_rebuilt_then_foreign_columns_and_nulls_are_ignored() -> None:
    row: dict[str, Any] = {**to_record(RunStart(**ENVELOPE, user_message="hi"))}
    row.update({"hash": "ab12", "tool_names": None, "step_id": None, "chosen": "final"})
    assert from_record(row) == RunStart(**ENVELOPE, user_message="hi")


@pytest.mark.parametrize(
    ("tag", "hint"),
    [("run.strat", "did you mean 'run.start'?"), ("llm.ends", "did you mean 'llm.end'?")],
)
def test_given_an_unknown_type_when_rebuilt_then_config_error_suggests_the_tag(
    tag: str, hint: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        from_record({"type": tag, "run_id": "r", "seq": 0, "ts": 0})
    assert repr(tag) in str(caught.value) and hint in str(caught.value)
    assert "EVENT_TYPES" in str(caught.value)


def test_given_a_record_without_a_type_when_rebuilt_then_config_error_names_none() -> None:
    with pytest.raises(ConfigError, match="unknown event type None"):
        from_record({"run_id": "r"})


def test_given_a_record_missing_a_required_field_when_rebuilt_then_the_field_is_named() -> None:
    record = dict(to_record(SkillRejected(**ENVELOPE, requested_id="b", reason="self-call")))
    del record["requested_id"]
    with pytest.raises(ConfigError, match=r"SkillRejected record has no 'requested_id'"):
        from_record(record)


def test_given_a_record_of_the_wrong_shape_when_rebuilt_then_config_error_names_the_type() -> None:
    record: dict[str, Any] = dict(to_record(_evaluated()))
    record["skipped"] = [{"id": "vip", "reason": "parked", "surprise": 1, "extra": 2}]
    assert isinstance(from_record(record), ContextEvaluated)  # unknown keys are ignored
    record["skipped"] = 7
    with pytest.raises(ConfigError, match=r"'context.evaluated' record does not fit"):
        from_record(record)


def test_given_a_non_json_tool_argument_when_recorded_then_config_error_names_the_fix() -> None:
    event = ToolStart(**ENVELOPE, tool_name="t", tool_call_id="c", args={"when": {1, 2}})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match=r"set\) in a free JSON field is not JSON; convert it"):
        to_record(event)


def test_given_options_and_defaults_when_recorded_then_mappings_become_dicts() -> None:
    event = RunConfigured(**ENVELOPE, agent_name="a", model="m", provider="p", max_iterations=5)
    record = to_record(event)
    assert record["options"] == {} and type(record["options"]) is dict
    assert json.loads(json.dumps(record))["tool_names"] == []


def test_given_an_int_in_a_float_field_when_rebuilt_then_it_becomes_a_float() -> None:
    record = dict(to_record(LLMEnd(**ENVELOPE, content="x", response_hash="h", duration_ms=3.0)))
    record["duration_ms"] = 3
    rebuilt = from_record(record)
    assert isinstance(rebuilt, LLMEnd) and type(rebuilt.duration_ms) is float


def test_given_a_streamed_llm_end_when_recorded_then_time_to_first_chunk_round_trips() -> None:
    event = LLMEnd(**ENVELOPE, content="x", response_hash="h", time_to_first_chunk_s=0.25)
    record = json.loads(json.dumps(to_record(event)))
    assert record["time_to_first_chunk_s"] == 0.25
    assert from_record(record) == event
    old = dict(to_record(LLMEnd(**ENVELOPE, content="x", response_hash="h")))
    old.pop("time_to_first_chunk_s")  # a record written before the field existed
    rebuilt = from_record(old)
    assert isinstance(rebuilt, LLMEnd) and rebuilt.time_to_first_chunk_s is None


def test_given_turn_routing_defaults_when_recorded_then_policy_is_spelled_out() -> None:
    record = to_record(TurnRouted(**ENVELOPE, by="menu", offered=("a", "b")))
    assert record["policy"] == {"near_tie_margin": 0.15, "menu_size": 3, "floor": None}
    assert record["offered"] == ["a", "b"] and record["scores"] == []


def test_given_an_injected_piece_when_recorded_then_provenance_columns_are_top_level() -> None:
    event = ContextInjected(
        **ENVELOPE, slot="system-prompt", source="skill", content_hash="c0ffee",
        content_summary=summarize_content("Refund policy:\n  be kind"),
        reason="skill 'refund' active",
        admitted_via="cursor", injection_id="refund", admitted_by=3,
    )
    record = to_record(event)
    assert (record["admitted_by"], record["admitted_via"]) == (3, "cursor")
    assert record["content_summary"] == "Refund policy: be kind"


@given(text=st.text())
def test_given_any_text_when_summarized_then_one_line_within_the_limit(text: str) -> None:
    summary = summarize_content(text)
    assert len(summary) <= SUMMARY_LIMIT
    assert not any(ch in summary for ch in "\n\t\r")
    folded = " ".join(text.split())
    assert summary == folded or (summary.endswith("…") and folded.startswith(summary[:-1]))
