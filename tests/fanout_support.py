"""What the tests of more than one receiver share: the real OpenTelemetry SDK exporting
through one stock exporter per receiver, each trace to the receiver its id picks (what the
Collector's load-balancing exporter with ``routing_key: traceID`` does), agent runs to
export, and a local S3-compatible server (moto's server mode on 127.0.0.1)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from otlp_build import _chat_attrs


class TraceIdRouter(SpanExporter):
    """Each span to the exporter its trace id picks (the id's last 8 bytes modulo N)."""

    def __init__(self, exporters: Sequence[SpanExporter]) -> None:
        self.exporters = list(exporters)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        shares: dict[int, list[ReadableSpan]] = defaultdict(list)
        for span in spans:
            assert span.context is not None
            shares[(span.context.trace_id & (2**64 - 1)) % len(self.exporters)].append(span)
        results = [self.exporters[k].export(share) for k, share in shares.items()]
        return SpanExportResult.SUCCESS if all(r is SpanExportResult.SUCCESS for r in results) \
            else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        for exporter in self.exporters:
            exporter.shutdown()


def agent_runs(provider: TracerProvider, traces: int) -> list[int]:
    """``traces`` agent runs (a root, two chat calls, a tool call between them); the
    children of every other run are exported before its root is even ended."""
    tracer = provider.get_tracer("fanout-test")
    ids = []
    for n in range(traces):
        with tracer.start_as_current_span("invoke_agent desk", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "desk"}) as root:
            ids.append(root.get_span_context().trace_id)
            with tracer.start_as_current_span("chat m", attributes=_chat_attrs(
                    "otel-genai", 1, "You are the desk.", False)):
                pass
            with tracer.start_as_current_span("execute_tool lookup", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.arguments": '{"order_id": "A-1"}',
                    "gen_ai.tool.call.result": '{"amount": 1}'}):
                pass
            with tracer.start_as_current_span("chat m", attributes=_chat_attrs(
                    "otel-genai", 2, "You are the desk.", True)):
                pass
            if n % 2:
                provider.force_flush()  # the children leave in an export of their own
    return ids


def routed_runs(targets: Sequence[str], traces: int) -> list[int]:
    """:func:`agent_runs` exported by the real SDK (``BatchSpanProcessor``) through a
    :class:`TraceIdRouter` to one stock OTLP/gRPC exporter per target (what a Collector's
    load-balancing exporter does); every span handed over when this returns."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(TraceIdRouter(
        [OTLPSpanExporter(endpoint=target, insecure=True) for target in targets])))
    ids = agent_runs(provider, traces)
    provider.force_flush()
    provider.shutdown()
    return ids


@contextmanager
def moto_bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A bucket on a local S3-compatible server; the store URI of a prefix of this test's
    own (``$FOOTPRINT_CACHE`` set to a folder of the test's)."""
    with moto_server(tmp_path, monkeypatch) as (_, uri):
        yield uri


@contextmanager
def moto_server(tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    """:func:`moto_bucket` and its server (to stop it, and start one again on its port:
    moto keeps what is stored in this process, across servers)."""
    from moto.server import ThreadedMotoServer
    from pyarrow import fs as pafs

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"),
                        ("FOOTPRINT_CACHE", str(tmp_path / "cache"))):
        monkeypatch.setenv(name, value)
    pafs.S3FileSystem(endpoint_override=f"{host}:{port}", scheme="http", region="us-east-1",
                      allow_bucket_creation=True).create_dir("traces")
    try:
        # moto keeps one in-memory S3 per process: each test writes under its own prefix
        yield server, (f"s3://traces/{tmp_path.name}?endpoint_override={host}:{port}"
                       "&scheme=http&region=us-east-1")
    finally:
        server.stop()
