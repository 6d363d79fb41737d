"""The fast paths of the OTel sink give exactly what the slow ones give.

The wire encoder writes the bytes the SDK's OTLP encoder writes; the
restamp copy equals ``dataclasses.replace``; the hashed resource is the
resource; what the wire encoder does not cover still reaches a receiver.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState
from otel_runs import scripted_run
from otlp_receiver import HttpReceiver
from strategies import events

from footprint.events import EventBase
from recorder.otel import OTelSink, otlp_exporter
from recorder.otel._restamp import compile_restamp
from recorder.otel._spans import SCOPE, HashedResource
from recorder.otel._wire import Unsupported, WireEncoder

_FLAGS = TraceFlags(TraceFlags.SAMPLED)
_RESOURCES = [HashedResource(Resource.create({"service.name": "a"})),
              Resource({"service.name": "b", "n": 3}, "https://schema/1")]
_SCOPES = [SCOPE, InstrumentationScope("other", None), None]

scalars = st.one_of(st.text(max_size=20), st.booleans(),
                    st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1),
                    st.floats(allow_nan=False))
values = st.one_of(scalars, st.lists(st.text(max_size=8), max_size=3).map(tuple),
                   st.lists(st.integers(-5, 5), max_size=3))
attributes = st.dictionaries(st.text(max_size=12), values, max_size=5)
u64 = st.integers(min_value=1, max_value=(1 << 64) - 1)
times = st.integers(min_value=0, max_value=(1 << 63))


@st.composite
def spans(draw: st.DrawFn) -> ReadableSpan:
    state = draw(st.sampled_from([TraceState(), TraceState([("k", "v"), ("a", "b")])]))
    context = SpanContext(draw(st.integers(1, (1 << 128) - 1)), draw(u64), False, _FLAGS,
                          state)
    parent = draw(st.none() | st.builds(SpanContext, st.just(context.trace_id), u64,
                                        st.booleans(), st.just(_FLAGS)))
    status = draw(st.sampled_from([Status(StatusCode.UNSET), Status(StatusCode.OK),
                                   Status(StatusCode.ERROR, "boom"), Status(StatusCode.ERROR)]))
    events_ = draw(st.lists(st.builds(Event, st.text(max_size=10), attributes, times),
                            max_size=3))
    return ReadableSpan(
        name=draw(st.text(max_size=20)), context=context, parent=parent,
        resource=draw(st.sampled_from(_RESOURCES)), attributes=draw(attributes),
        events=tuple(events_), kind=draw(st.sampled_from(list(SpanKind))), status=status,
        start_time=draw(times), end_time=draw(times),
        instrumentation_scope=draw(st.sampled_from(_SCOPES)))


@settings(max_examples=200)
@given(st.lists(spans(), max_size=6))
def test_given_any_spans_when_wire_encoded_then_the_bytes_are_the_sdk_encoders_bytes(
    batch: list[ReadableSpan],
) -> None:
    encoder = WireEncoder()
    expected = encode_spans(batch).SerializeToString()
    assert encoder.encode_request(batch) == expected
    assert encoder.encode_request(batch) == expected  # again, from the warm caches


def test_given_recorded_runs_when_mapped_and_wire_encoded_then_the_bytes_match_the_sdk() -> None:
    memory: list[ReadableSpan] = []

    class Keep:
        def export(self, spans: Any) -> Any:
            memory.extend(spans)
            from opentelemetry.sdk.trace.export import SpanExportResult
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            return None

    sink = OTelSink(exporter=Keep(), capture_content=True, schedule_delay_s=0.01)
    for k in range(3):
        sink.export([sink.stamp(e) for e in scripted_run(f"r{k}", iterations=4, tools=2,
                                                           concurrent=k == 1)])
    sink.shutdown()
    assert len(memory) == 3 * (1 + 4 + 4 + 3 * 2)  # root, iterations, chats, 2 tools x 3
    assert WireEncoder().encode_request(memory) == encode_spans(memory).SerializeToString()


def _span(**kw: Any) -> ReadableSpan:
    context = SpanContext(5, 6, False, _FLAGS)
    return ReadableSpan(**{"name": "s", "context": context, "resource": _RESOURCES[0],
                           "start_time": 1, "end_time": 2, **kw})


@pytest.mark.parametrize("span", [
    _span(attributes={"raw": b"bytes"}), _span(attributes={"none": None}),
    _span(attributes={"big": 1 << 64}), _span(attributes={"nested": (("a",),)}),
    _span(links=(Link(SpanContext(5, 7, False, _FLAGS)),)),
], ids=["bytes", "none", "big-int", "nested", "link"])
def test_given_what_the_wire_encoder_does_not_cover_when_encoding_then_unsupported(
    span: ReadableSpan,
) -> None:
    with pytest.raises(Unsupported):
        WireEncoder().encode_request([span])


def test_given_an_unsupported_span_when_the_http_exporter_sends_it_then_the_sdk_path_delivers(
) -> None:
    span = _span(attributes={"raw": b"\x00\x01", "ok": "yes"})
    with HttpReceiver() as receiver:
        exporter = otlp_exporter("http/protobuf", receiver.endpoint)
        assert exporter.export([span]).name == "SUCCESS"
        assert exporter.export([_span(name="plain")]).name == "SUCCESS"
        assert receiver.wait_for(lambda s: len(s) == 2)
        exporter.shutdown()
    got = {s.name: s.attributes for s in receiver.spans}
    assert got == {"s": {"raw": b"\x00\x01", "ok": "yes"}, "plain": {}}


@settings(max_examples=300)
@given(events(), st.text(max_size=32), st.text(max_size=16))
def test_given_any_event_when_restamped_then_it_equals_replace_and_the_original_is_kept(
    event: EventBase, trace: str, span: str,
) -> None:
    before = dataclasses.replace(event)
    copy = compile_restamp(type(event))(event, trace, span)
    assert copy == dataclasses.replace(event, trace_id=trace, span_id=span)
    assert type(copy) is type(event) and event == before


def test_given_an_event_class_without_slots_when_restamped_then_replace_is_used() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Loose(EventBase):
        note: str = "n"

    event = Loose(run_id="r", seq=0, ts=1, note="kept")
    copy = compile_restamp(Loose)(event, "t", "s")
    assert (copy.note, copy.trace_id, copy.span_id, event.trace_id) == ("kept", "t", "s", None)


@given(st.dictionaries(st.text(max_size=8), st.text(max_size=8) | st.integers(), max_size=4))
def test_given_any_resource_when_hashed_once_then_it_equals_and_hashes_as_the_original(
    attrs: dict[str, Any],
) -> None:
    resource = Resource(attrs, "https://schema/2")
    hashed = HashedResource(resource)
    assert hashed == resource and resource == hashed and hash(hashed) == hash(resource)
    assert hashed.attributes == resource.attributes and hashed.schema_url == resource.schema_url
