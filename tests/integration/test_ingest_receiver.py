"""The three doors of the intake against real clients on 127.0.0.1: raw OTLP/HTTP posts (good
and bad), the SDK's gRPC exporter, the in-process SpanProcessor, files, and a remap."""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from otlp_build import agent_trace, logs_request, to_json, trace_request

from footprint.events import RunSource
from recorder import open_store
from recorder.ingest import Intake, Receiver, SpanProcessor, ingest_files, remap

PB = {"Content-Type": "application/x-protobuf"}


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    r = Receiver(Intake(tmp_path / "store"), port=0, grpc_port=0, max_body=1_000_000).start()
    yield r
    r.stop()


def _runs(store: Path) -> list[tuple[str, str, int]]:
    with open_store(store) as s:
        return [(r[0], r[1], r[2]) for r in s.rows(
            "SELECT run_id, status, iterations FROM runs ORDER BY start_ns, run_id")]


def _post(r: Receiver, body: bytes, headers: dict[str, str], path: str = "/v1/traces") -> int:
    return httpx.post(r.endpoint + path, content=body, headers=headers, timeout=10).status_code


def _good(r: Receiver, trace: int) -> int:
    return _post(r, trace_request(agent_trace(trace)).SerializeToString(), PB)


def test_given_bad_batches_when_posted_then_each_is_counted_and_the_receiver_keeps_mapping(
        receiver: Receiver) -> None:
    body = trace_request(agent_trace(1)).SerializeToString()
    huge = agent_trace(2)
    huge[0]["attributes"] = {**huge[0]["attributes"], "blob": "x" * 1_200_000}  # type: ignore[dict-item]
    foreign = [{"trace_id": f"{3:032x}", "span_id": f"{31:016x}", "name": "GET /health",
                "attributes": {"http.method": "GET"}}]
    assert _post(receiver, body[: len(body) // 2], PB) == 400
    assert _post(receiver, body, {"Content-Type": "text/plain"}) == 415
    assert _post(receiver, trace_request(huge).SerializeToString(), PB) == 413
    assert _post(receiver, trace_request(foreign).SerializeToString(), PB) == 200
    assert _good(receiver, 4) == 200
    receiver.intake.flush()  # the 200 came once each batch was stored raw: map what waits
    totals = receiver.intake.totals
    assert totals["corrupt batch (protobuf did not parse)"] == 1
    assert totals["wrong content type 'text/plain' (want application/x-protobuf or "
                  "application/json)"] == 1
    assert totals["body over the 1000000-byte limit"] == 1
    assert totals["span in no GenAI dialect"] == 1
    assert totals["trace with no model or tool call"] == 1
    assert [(status, iters) for _, status, iters in _runs(receiver.intake.store)] == [
        ("complete", 2)]


def test_given_a_large_attribute_under_the_limit_when_posted_then_it_is_stored_whole(
        receiver: Receiver) -> None:
    spans = agent_trace(5, calls=1, system="policy " * 80_000)
    assert _post(receiver, trace_request(spans).SerializeToString(), PB) == 200
    receiver.intake.flush()
    with open_store(receiver.intake.store) as s:
        (chars,) = s.rows("SELECT length(raw_content) FROM injections WHERE slot = "
                          "'system-prompt'")[0]
    assert chars == len("policy " * 80_000)


def test_given_gzipped_otlp_json_when_posted_then_the_trace_ids_survive(receiver: Receiver) -> None:
    body = gzip.compress(to_json(trace_request(agent_trace(6))))
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    assert _post(receiver, body, headers) == 200
    receiver.intake.flush()
    (run_id, _, _), = _runs(receiver.intake.store)
    with open_store(receiver.intake.store) as s:
        source = next(e for e in s.events(run_id) if isinstance(e, RunSource))
    assert source.foreign_trace_id == f"{6:032x}"


def test_given_content_on_v1_logs_when_both_arrive_then_the_call_has_its_messages(
        receiver: Receiver) -> None:
    spans = agent_trace(7, calls=1)
    spans[0]["attributes"] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    logs = logs_request([{"trace_id": spans[0]["trace_id"], "span_id": spans[0]["span_id"],
                          "event_name": "gen_ai.user.message", "body": {"content": "refund?"}}])
    assert _post(receiver, logs.SerializeToString(), PB, "/v1/logs") == 200
    assert _post(receiver, trace_request(spans).SerializeToString(), PB) == 200
    receiver.intake.flush()
    with open_store(receiver.intake.store) as s:
        assert s.rows("SELECT raw_content FROM injections WHERE slot = 'messages'") == [
            ("refund?",)]


def test_given_the_sdk_grpc_exporter_when_it_exports_then_the_run_is_mapped(
        receiver: Receiver) -> None:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=f"127.0.0.1:{receiver.grpc_port}", insecure=True)))
    _emit_agent(provider)
    provider.shutdown()
    receiver.intake.flush()
    assert [(s, i) for _, s, i in _runs(receiver.intake.store)] == [("complete", 1)]


def _emit_agent(provider: object) -> None:
    tracer = provider.get_tracer("handmade-genai")  # type: ignore[attr-defined]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text",'
                                     '"content":"hi"}]}]',
            "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text",'
                                      '"content":"hello"}]}]'}
    with tracer.start_as_current_span("invoke_agent desk", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "desk"}), \
            tracer.start_as_current_span("chat m", attributes=chat):
        pass


def test_given_the_in_process_span_processor_when_an_app_traces_then_its_run_is_stored(
        tmp_path: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider()
    provider.add_span_processor(SpanProcessor(tmp_path))
    _emit_agent(provider)
    provider.shutdown()
    assert [(s, i) for _, s, i in _runs(tmp_path)] == [("complete", 1)]


def test_given_json_lines_and_protobuf_files_when_ingested_then_remap_finds_the_same_runs(
        tmp_path: Path) -> None:
    lines = tmp_path / "traces.jsonl"
    lines.write_bytes(to_json(trace_request(agent_trace(8))) + b"\n{not json\n"
                      + to_json(trace_request(agent_trace(9))) + b"\n")
    pb = tmp_path / "traces.pb"
    pb.write_bytes(trace_request(agent_trace(10)).SerializeToString())
    report = ingest_files([lines, pb], tmp_path / "store")
    assert len(report.runs) == 3
    assert report.problems == {f"corrupt line (JSON did not parse: {lines} line 2)": 1}
    before = _runs(tmp_path / "store")
    gone, again = remap(tmp_path / "store")
    assert gone > 0 and sorted(again.runs) == sorted(report.runs)
    assert _runs(tmp_path / "store") == before


def test_given_a_trace_whose_root_never_comes_when_it_idles_then_it_is_mapped_incomplete(
        tmp_path: Path) -> None:
    intake = Intake(tmp_path, idle_s=0.05)
    spans = agent_trace(40)
    first = intake.take(trace_request(spans[:-1]).SerializeToString(), signal="traces", fmt="pb")
    assert first.runs == ()
    time.sleep(0.1)
    later = intake.take(trace_request(agent_trace(41)).SerializeToString(), signal="traces",
                        fmt="pb")
    intake.close()
    assert len(later.runs) == 2
    assert sorted(s for _, s, _ in _runs(tmp_path)) == ["complete", "incomplete"]


def test_given_otlp_json_with_a_value_of_the_wrong_kind_when_taken_then_it_is_counted(
        tmp_path: Path) -> None:
    body = (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + b"1" * 32
            + b'","spanId":"' + b"2" * 16 + b'","attributes":[{"key":"x","value":'
            b'{"doubleValue":"not a number"}}]}]}]}]}')
    with Intake(tmp_path) as intake:
        report = intake.take(body, signal="traces", fmt="json")
    assert report.problems == {"corrupt batch (OTLP/JSON: ValueError)": 1}


def test_given_logs_after_their_trace_when_remapped_then_the_content_joins(
        tmp_path: Path) -> None:
    spans = agent_trace(42, calls=1)
    spans[0]["attributes"] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    logs = logs_request([{"trace_id": spans[0]["trace_id"], "span_id": spans[0]["span_id"],
                          "event_name": "gen_ai.user.message", "body": {"content": "late"}}])
    with Intake(tmp_path) as intake:
        intake.take(trace_request(spans).SerializeToString(), signal="traces", fmt="pb")
        intake.take(logs.SerializeToString(), signal="logs", fmt="pb")
    remap(tmp_path)
    with open_store(tmp_path) as s:
        assert s.rows("SELECT raw_content FROM injections WHERE slot = 'messages'") == [
            ("late",)]


def test_given_a_busy_mapping_thread_when_a_batch_is_posted_then_it_is_acknowledged_once_stored_raw(
        tmp_path: Path) -> None:
    """The 200 waits for the raw batch (durable), not for the mapping: the mapping thread is
    held inside the report of the first batch while the second is posted."""
    import threading

    held, release = threading.Event(), threading.Event()

    def slow_report(report: object) -> None:
        if not held.is_set():
            held.set()
            release.wait(10)

    r = Receiver(Intake(tmp_path / "store", durable=True), port=0,
                 on_report=slow_report).start()
    try:
        assert _good(r, 1) == 200
        assert held.wait(10)
        assert _good(r, 2) == 200  # answered while the mapping thread is held
        pending = sorted(p.name for p in (r.intake.store / "ingest" / "raw").rglob("*.pending"))
        assert len(pending) == 2 and r.intake.totals["spans"] == len(agent_trace(1))
    finally:
        release.set()
        r.stop()
    assert len(_runs(r.intake.store)) == 2
    assert not list((r.intake.store / "ingest" / "raw").rglob("*.pending"))
    assert r.intake.totals["spans"] == 2 * len(agent_trace(1))
