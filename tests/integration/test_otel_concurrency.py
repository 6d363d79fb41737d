"""Two tools of one batch run concurrently and end out of order: spans close by call id."""

from __future__ import annotations

from otel_runs import scripted_run
from otlp_receiver import HttpReceiver

from footprint.events import ToolEnd, ToolStart
from recorder import Recorder
from recorder.otel import OTelSink, otlp_exporter


def test_given_two_concurrent_tools_ending_out_of_order_when_exported_then_each_span_is_right(
) -> None:
    events = scripted_run(iterations=2, tools=2, concurrent=True)
    starts = {e.tool_call_id: e.ts for e in events if isinstance(e, ToolStart)}
    ends = {e.tool_call_id: e.ts for e in events if isinstance(e, ToolEnd)}
    assert list(ends) == ["c1_1", "c1_0"]  # the second call ends first
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        rec = Recorder(sinks=[sink])
        for event in events:
            rec.emit(event)
        rec.close()
        assert receiver.wait_for(lambda s: len(s) == 7)
    iteration1 = next(s for s in receiver.spans if s.attributes.get("footprint.iteration") == 1)
    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in receiver.spans
             if s.name.startswith("execute_tool")}
    assert sorted(tools) == ["c1_0", "c1_1"]
    for call_id, span in tools.items():
        assert span.parent_id == iteration1.span_id
        assert (span.start_ns, span.end_ns) == (starts[call_id], ends[call_id])
        assert span.name == f"execute_tool lookup{call_id[-1]}"
        assert span.attributes["footprint.tool.parallel_count"] == 2
    assert tools["c1_0"].span_id != tools["c1_1"].span_id
    assert iteration1.start_ns <= min(starts.values()) and max(ends.values()) <= iteration1.end_ns
