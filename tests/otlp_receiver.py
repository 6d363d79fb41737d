"""A real OTLP trace receiver for tests: HTTP (protobuf, optional gzip) and gRPC, on 127.0.0.1.

``HttpReceiver`` answers like a collector (or, by ``mode``, like a broken
one: ``error`` answers 503, ``slow`` waits ``delay_s`` first; ``refuse_every=k``
answers 400, which is not retried, to every k-th request); ``GrpcReceiver``
serves the gRPC TraceService. Both decode every span into a plain
:class:`ReceivedSpan`. ``down_endpoint()`` is a URL nobody listens on.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = ["GrpcReceiver", "HttpReceiver", "ReceivedSpan", "down_endpoint", "tree"]

_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: "unset", 1: "ok", 2: "error"}


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[tuple[str, int, dict[str, Any]], ...]
    status: str
    status_message: str
    resource: dict[str, Any] = field(default_factory=dict)


def _value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    return getattr(v, which) if which else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs if isinstance(kv, KeyValue)}


def _decode(request: trace_service_pb2.ExportTraceServiceRequest) -> list[ReceivedSpan]:
    out: list[ReceivedSpan] = []
    for rs in request.resource_spans:
        resource = _attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(ReceivedSpan(
                    name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                    parent_id=s.parent_span_id.hex(), kind=_KINDS[s.kind],
                    start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano,
                    attributes=_attrs(s.attributes),
                    events=tuple((e.name, e.time_unix_nano, _attrs(e.attributes))
                                 for e in s.events),
                    status=_STATUS[s.status.code], status_message=s.status.message,
                    resource=resource,
                ))
    return out


class _Collected:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.payloads: list[bytes] = []
        """Every request body as received (gzip undone): what went over the wire."""
        self.requests = 0
        self.gzipped = 0
        self._lock = threading.Lock()

    def add(self, spans: list[ReceivedSpan], gzipped: bool) -> None:
        with self._lock:
            self.spans.extend(spans)
            self.requests += 1
            self.gzipped += int(gzipped)

    def wait_for(self, ok: Callable[[list[ReceivedSpan]], bool], timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if ok(list(self.spans)):
                    return True
            time.sleep(0.01)
        return False


class HttpReceiver(_Collected):
    """OTLP/HTTP on ``endpoint`` (``http://127.0.0.1:<port>``); POST ``/v1/traces``."""

    def __init__(self, mode: str = "ok", *, delay_s: float = 2.0, status: int = 503,
                 refuse_every: int = 0) -> None:
        super().__init__()
        self.mode, self.delay_s, self.status = mode, delay_s, status
        self.refuse_every = refuse_every
        self.attempts = 0
        self.refused = 0
        """Spans in the requests refused by ``refuse_every``."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    receiver.attempts += 1
                    every = receiver.refuse_every
                    refuse = every > 0 and receiver.attempts % every == 0
                if receiver.mode == "slow":
                    time.sleep(receiver.delay_s)
                if receiver.mode == "error":
                    self.send_response(receiver.status)
                    self.end_headers()
                    return
                zipped = self.headers.get("Content-Encoding") == "gzip"
                request = trace_service_pb2.ExportTraceServiceRequest()
                raw = gzip.decompress(body) if zipped else body
                request.ParseFromString(raw)
                if refuse:
                    with receiver._lock:
                        receiver.refused += len(_decode(request))
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                receiver.payloads.append(raw)
                receiver.add(_decode(request), zipped)
                reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-protobuf")
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:  # the client gave up waiting (the "slow" mode)
                    return

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> HttpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class GrpcReceiver(_Collected):
    """OTLP/gRPC TraceService on ``endpoint`` (``http://127.0.0.1:<port>``, insecure)."""

    def __init__(self) -> None:
        super().__init__()
        receiver = self

        class Service(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
            def Export(self, request: Any, context: Any) -> Any:
                meta = dict(context.invocation_metadata())
                receiver.add(_decode(request), meta.get("grpc-encoding") == "gzip")
                return trace_service_pb2.ExportTraceServiceResponse()

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        self.endpoint = f"http://127.0.0.1:{port}"

    def __enter__(self) -> GrpcReceiver:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(grace=None)


def down_endpoint() -> str:
    """An ``http://127.0.0.1:<port>`` URL with nothing listening (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def tree(spans: list[ReceivedSpan]) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """``(span id, parent id, name, kind, event names)`` per span, sorted: a comparable shape."""
    return sorted((s.span_id, s.parent_id, s.name, s.kind, tuple(e[0] for e in s.events))
                  for s in spans)
