"""The SDK's OTLP/HTTP span exporter, encoding with :class:`recorder.otel._wire.WireEncoder`.

Everything but the encoding is the SDK's: endpoint, headers, TLS,
compression, retries, timeouts, the ``OTEL_EXPORTER_OTLP_*`` variables and
the exporter's own metrics. It sends through the SDK client the exporter
built (``_client``); should a future SDK drop it, or should a batch hold
something the wire encoder does not cover, the SDK's ``export`` runs as is.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as SdkHttpExporter,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from recorder.otel._wire import Unsupported, WireEncoder

__all__ = ["HttpSpanExporter"]

_log = logging.getLogger("recorder.otel")


class HttpSpanExporter(SdkHttpExporter):
    """OTLP/HTTP (protobuf) span exporter; same arguments as the SDK's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire = WireEncoder()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        client: Any = getattr(self, "_client", None)
        metrics: Any = getattr(self, "_metrics", None)
        if self._shutdown or not callable(getattr(client, "export", None)) or metrics is None:
            return super().export(spans)
        try:
            data = self._wire.encode_request(spans)
        except Unsupported:
            return super().export(spans)
        with metrics.export_operation(len(spans)) as result:
            limit: int = getattr(self, "_max_request_size", 0)
            if 0 < limit < len(data):
                _log.warning("Dropping span batch: %d bytes exceed max_request_size %d",
                             len(data), limit)
                return SpanExportResult.FAILURE
            sent = client.export(data)
            if not sent.success:
                result.error = sent.error
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS
