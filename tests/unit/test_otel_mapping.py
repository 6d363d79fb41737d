"""Events -> spans without a network: the mapping, bounds, sampling and provider choices."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from otel_runs import SECRET, scripted_run

from footprint._errors import ConfigError
from footprint.events import ContextInjected, RunFailed, SkillRejected
from recorder.otel import OTelSink, capture_content_from_env
from recorder.otel._attributes import MAX_CHARS, MAX_ITEMS, clip, event_attributes
from recorder.otel._mapping import RunTrace


def _sink(**kw: Any) -> tuple[OTelSink, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(**kw)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return OTelSink(provider), memory


def test_given_a_user_provider_when_a_run_is_exported_then_its_processors_get_finished_spans(
) -> None:
    sink, memory = _sink()
    sink.export(scripted_run(iterations=2, tools=1))
    spans = memory.get_finished_spans()
    assert [s.name for s in spans] == [
        "chat m-large", "execute_tool lookup0", "footprint.iteration", "chat m-large",
        "footprint.iteration", "invoke_agent support"]
    assert all(s.end_time is not None and s.start_time <= s.end_time for s in spans)


def test_given_a_provider_sampler_that_drops_when_exporting_then_no_spans_and_run_counted(
) -> None:
    sink, memory = _sink(sampler=ALWAYS_OFF)
    sink.export(scripted_run(iterations=2))
    assert memory.get_finished_spans() == ()
    assert (sink.stats().runs_unsampled, sink.stats().runs_traced) == (1, 0)


def test_given_ratio_zero_when_exporting_then_spans_are_dropped_but_events_untouched() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    sink = OTelSink(provider, sample_ratio=0.0)
    events = scripted_run(iterations=1)
    sink.export(events)
    assert memory.get_finished_spans() == ()
    assert [sink.stamp(e) for e in events] == events


def test_given_a_run_that_never_ends_when_the_sink_shuts_down_then_spans_close_incomplete(
) -> None:
    sink, memory = _sink()
    events = scripted_run(iterations=2, tools=1)
    sink.export(events[:12])
    sink.shutdown()
    spans = {s.name: s for s in memory.get_finished_spans()}
    root = spans["invoke_agent support"]
    assert root.attributes["footprint.incomplete"] is True
    assert root.end_time == events[11].ts
    assert "footprint.iteration" in spans


def test_given_a_failed_run_when_mapped_then_the_root_has_error_status_and_event() -> None:
    events = scripted_run(iterations=1)[:-1]
    last = events[-1]
    events.append(RunFailed(run_id=last.run_id, seq=last.seq + 1, ts=last.ts + 1,
                            error_type="RunError", message=f"boom {SECRET}", stage="llm"))
    trace = RunTrace(last.run_id)
    done = [s for e in events for s in trace.feed(e)]
    root = done[-1]
    assert root.key == "run" and root.error == "run failed: RunError"
    assert root.events[-1][0] == "footprint.run.error"
    assert root.events[-1][2] == {"error.type": "RunError", "footprint.stage": "llm"}


def test_given_a_rejection_inside_a_tool_call_when_mapped_then_it_lands_on_the_tool_span() -> None:
    events = scripted_run(iterations=2, tools=1)
    at = next(i for i, e in enumerate(events) if getattr(e, "type", "") == "tool.start")
    start = events[at]
    rejected = SkillRejected(run_id=start.run_id, seq=start.seq, ts=start.ts, iteration=1,
                             requested_id="billing", reason="unreachable", allowed=("a",),
                             tool_call_id="c1_0")
    trace = RunTrace(start.run_id)
    done = [s for e in [*events[: at + 1], rejected, *events[at + 1 :]] for s in trace.feed(e)]
    tool = next(s for s in done if s.key == "tool#c1_0")
    assert [n for n, _, _ in tool.events] == ["footprint.skill.rejected"]


def test_given_content_on_when_mapped_then_texts_are_cut_at_the_limit() -> None:
    trace = RunTrace("r", content=True, content_limit=10)
    done = [s for e in scripted_run("r", iterations=2, tools=1) for s in trace.feed(e)]
    tool = next(s for s in done if s.key.startswith("tool#"))
    assert tool.attributes["gen_ai.tool.call.result"] == "result SE…"


texts = st.text(max_size=400)


@given(st.lists(texts, max_size=40), texts, texts, st.booleans())
def test_given_any_decision_when_attributes_are_built_then_they_are_bounded_otel_values(
    ids: list[str], reason: str, source: str, content: bool,
) -> None:
    injected = ContextInjected(run_id="r", seq=0, ts=0, slot="messages", source="custom",
                               content_hash="h", content_summary=reason, reason=reason,
                               admitted_via="rule", injection_id=source or None)
    rejected = SkillRejected(run_id="r", seq=1, ts=0, requested_id=source, reason="posture",
                             allowed=tuple(ids), posture=reason)
    for event in (injected, rejected):
        attrs = event_attributes(event, content)
        assert attrs is not None
        for value in attrs.values():
            items = value if isinstance(value, tuple) else (value,)
            assert len(items) <= MAX_ITEMS
            assert all(isinstance(v, str | bool | int | float) for v in items)
            assert all(len(v) <= MAX_CHARS for v in items if isinstance(v, str))
    prose = event_attributes(injected, content) or {}
    assert ("footprint.reason" in prose) is content
    if content:
        assert prose["footprint.reason"] == clip(reason)


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("TRUE", True), ("span_only", True), ("false", False), ("", False),
    ("no_content", False)])
def test_given_the_content_env_var_when_read_then_only_true_values_opt_in(
    value: str, expected: bool,
) -> None:
    env = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": value}
    assert capture_content_from_env(env) is expected


def test_given_a_non_sdk_provider_when_building_the_sink_then_config_error_names_the_fix() -> None:
    with pytest.raises(ConfigError, match="not an OpenTelemetry SDK TracerProvider"):
        OTelSink(object())


def test_given_both_provider_and_exporter_when_building_then_config_error_says_pick_one() -> None:
    with pytest.raises(ConfigError, match="pass one"):
        OTelSink(TracerProvider(), exporter=InMemorySpanExporter())


def test_given_env_exporter_none_when_building_from_env_then_the_sink_exports_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    sink = OTelSink()
    assert sink.export(scripted_run(iterations=1)).value == "success"
    assert sink.stats().spans == 0


@pytest.mark.parametrize("first_chunk_s", [0.25, None])
def test_given_a_streamed_reply_when_mapped_then_the_chat_span_carries_its_time_to_first_chunk(
    first_chunk_s: float | None,
) -> None:
    import dataclasses

    from footprint.events import LLMEnd

    sink, memory = _sink()
    sink.export([dataclasses.replace(e, time_to_first_chunk_s=first_chunk_s)
                 if isinstance(e, LLMEnd) else e for e in scripted_run(iterations=1)])
    (chat,) = [s for s in memory.get_finished_spans() if s.name.startswith("chat")]
    assert (chat.attributes or {}).get("gen_ai.response.time_to_first_chunk") == first_chunk_s
