"""The SDK's OTLP/gRPC span exporter, encoding with :class:`recorder.otel._wire.WireEncoder`.

Only ``_translate_data`` (the SDK's own hook for building the request) is
replaced: the wire bytes are parsed into the request message in C, which
the gRPC stub serializes again, still far cheaper than the SDK encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as SdkGrpcExporter,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan

from recorder.otel._wire import Unsupported, WireEncoder

__all__ = ["GrpcSpanExporter"]


class GrpcSpanExporter(SdkGrpcExporter):
    """OTLP/gRPC span exporter; same arguments as the SDK's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire = WireEncoder()

    def _translate_data(self, data: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
        try:
            request: ExportTraceServiceRequest = ExportTraceServiceRequest.FromString(
                self._wire.encode_request(data))
        except Unsupported:
            return super()._translate_data(data)
        return request
