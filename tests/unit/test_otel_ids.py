"""Deterministic OTel ids: the sink and the Parquet stamp agree, and sampling is per run."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace.sampling import Decision, TraceIdRatioBased
from otel_runs import scripted_run

from footprint._errors import ConfigError
from footprint.events import ToolEnd, ToolStart
from recorder.otel import OTelIds, span_id_of, span_key, trace_id_of

run_ids = st.text(min_size=1, max_size=40)


@given(run_ids, st.text(max_size=30), st.text(max_size=30))
def test_given_any_run_and_keys_when_ids_are_derived_then_they_are_stable_valid_and_distinct(
    run_id: str, a: str, b: str,
) -> None:
    assert 0 < trace_id_of(run_id) < 1 << 128 and 0 < span_id_of(run_id, a) < 1 << 64
    assert trace_id_of(run_id) == trace_id_of(run_id)
    assert (span_id_of(run_id, a) == span_id_of(run_id, b)) == (a == b)


@given(run_ids, st.floats(min_value=0.0, max_value=1.0))
def test_given_a_ratio_when_a_run_is_sampled_then_the_sdk_ratio_sampler_agrees(
    run_id: str, ratio: float,
) -> None:
    ours = OTelIds(ratio).sampled(run_id)
    sdk = TraceIdRatioBased(ratio).should_sample(None, trace_id_of(run_id), "invoke_agent")
    assert ours == (sdk.decision is Decision.RECORD_AND_SAMPLE)


def test_given_a_run_when_events_are_keyed_then_tools_llm_and_iterations_get_their_spans() -> None:
    events = scripted_run(iterations=2, tools=2, concurrent=True)
    keys = {(getattr(e, "type", ""), span_key(e)) for e in events}
    assert ("run.configured", "run") in keys and ("run.end", "run") in keys
    assert ("llm.start", "llm#1") in keys and ("llm.end", "llm#2") in keys
    assert ("tool.start", "tool#c1_0") in keys and ("tool.end", "tool#c1_1") in keys
    assert ("context.evaluated", "iteration#0.2") in keys
    assert ("tool.effect", "iteration#0.1") in keys


def test_given_a_sampled_run_when_stamped_then_every_event_names_its_trace_and_span() -> None:
    ids = OTelIds()
    events = scripted_run("r-stamp", iterations=2, tools=1)
    stamped = [ids.stamp(e) for e in events]
    assert {e.trace_id for e in stamped} == {f"{trace_id_of('r-stamp'):032x}"}
    start = next(e for e in stamped if isinstance(e, ToolStart))
    end = next(e for e in stamped if isinstance(e, ToolEnd))
    assert start.span_id == end.span_id == f"{span_id_of('r-stamp', 'tool#c1_0'):016x}"
    assert [dataclasses.replace(e, trace_id=None, span_id=None) for e in stamped] == events
    assert ids.stamp(stamped[0]) is stamped[0]


def test_given_an_unsampled_run_when_stamped_then_the_event_is_left_alone() -> None:
    event = scripted_run("r-none", iterations=1)[0]
    assert OTelIds(0.0).stamp(event) is event


@pytest.mark.parametrize("ratio", [-0.1, 1.5])
def test_given_a_ratio_outside_0_1_when_building_ids_then_config_error_quotes_it(
    ratio: float,
) -> None:
    with pytest.raises(ConfigError, match=repr(ratio)):
        OTelIds(ratio)
