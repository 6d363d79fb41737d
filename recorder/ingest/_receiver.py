"""``Receiver``: OTLP over HTTP (protobuf and JSON, gzip; ``/v1/traces`` and ``/v1/logs``)
on a threaded ``http.server``, and optionally OTLP over gRPC, into one :class:`Intake`.

Loopback only unless ``allow_remote=True``; a bad request is answered with the OTLP status
for it, counted on the intake and reported, and never stops the receiver.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from footprint._errors import ConfigError
from recorder.ingest._bounded import BadBody, TooLarge, body_length, inflate, read_chunked
from recorder.ingest._forward import Forward
from recorder.ingest._intake import BatchReport, Intake
from recorder.ingest._raw import Format, Signal
from recorder.ingest._route import split_body

__all__ = ["MAX_BODY", "Receiver", "is_loopback"]

MAX_BODY = 64 * 1024 * 1024
_PATHS: dict[str, Signal] = {"/v1/traces": "traces", "/v1/logs": "logs"}
_log = logging.getLogger("recorder")
_POLL_S = 0.05
"""How often the server loop looks whether it is asked to stop (``http.server``'s 0.5 s
default made every stop, and so every drain, half a second longer)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bracketed(host: str) -> str:
    """``host`` as a URL or gRPC target writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver  # set on the per-receiver subclass
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _answer(self, code: int, body: bytes = b"", kind: str = "application/x-protobuf") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> bytes:
        """The request's body within the cap: chunked, or exactly ``Content-Length`` bytes."""
        limit = self.receiver.max_body
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return read_chunked(self.rfile, limit)  # type: ignore[arg-type]
        length = body_length(self.headers.get("Content-Length"))
        if length is None:
            raise _NoLength
        if length > limit:
            raise TooLarge(f"body over the {limit}-byte limit")
        body = self.rfile.read(length)
        if len(body) < length:
            raise BadBody(f"body cut short ({len(body)} of {length} bytes)")
        return body

    def _refused(self, code: int, why: str) -> None:
        self.receiver.refuse(why)
        self.close_connection = True  # what is left of the body is never read
        self._answer(code)

    def do_POST(self) -> None:
        signal = _PATHS.get(self.path.split("?")[0])
        if signal is None:
            return self._refused(404, f"POST to unknown path {self.path!r}")
        try:
            body = self._body()
            kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            fmt = {"application/x-protobuf": "pb", "application/json": "json"}.get(kind)
            if fmt is None:
                return self._refused(415, f"wrong content type {kind!r} (want "
                                     "application/x-protobuf or application/json)")
            plain = inflate(body, self.headers.get("Content-Encoding"), self.receiver.max_body)
        except _NoLength:
            return self._refused(411, "POST with neither Content-Length nor chunked body")
        except TooLarge as exc:
            return self._refused(413, str(exc))
        except BadBody as exc:
            return self._refused(400, f"corrupt batch ({exc})")
        code = self.receiver.deliver(plain, signal, fmt)  # type: ignore[arg-type]
        if fmt == "json":
            return self._answer(code, b"{}", "application/json")
        return self._answer(code)


class _NoLength(Exception):
    """A POST whose length is unknown (answered 411)."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = self.socket.accept()
        conn.setblocking(True)  # the listening socket may be non-blocking (shared)
        return conn, addr


class _Server6(_Server):
    address_family = socket.AF_INET6


class Receiver:
    """Serve OTLP into ``intake`` until :meth:`stop`. ``port=0`` picks a free port; a body
    over ``max_body`` bytes, on the wire or once inflated, is refused (413, nothing kept)
    and counted; a ``Content-Length`` that is not a byte count is refused (400), a POST
    with no length 411; chunked bodies are read within the cap. ``host`` may be IPv6."""

    def __init__(self, intake: Intake, *, host: str = "127.0.0.1", port: int = 4318,
                 grpc_port: int | None = None, allow_remote: bool = False,
                 on_report: Callable[[BatchReport], None] | None = None,
                 max_body: int = MAX_BODY, listen: socket.socket | None = None,
                 peers: Sequence[str] = (), slot: int = 0) -> None:
        if not is_loopback(host) and not allow_remote:
            raise ConfigError(f"receive --host {host!r} is not a loopback address; anyone who "
                              "can reach it could write into the store: pass --allow-remote "
                              "to mean it, or use 127.0.0.1")
        for name, value in (("port", port), ("grpc_port", grpc_port)):
            if value is not None and not 0 <= value <= 65535:
                raise ConfigError(f"Receiver({name}={value!r}): a port is 0..65535 (0: any)")
        if not isinstance(max_body, int) or max_body < 1:
            raise ConfigError(f"Receiver(max_body={max_body!r}): a positive byte count")
        if peers and not 0 <= slot < len(peers):
            raise ConfigError(f"Receiver(slot={slot!r}): this worker's index among its "
                              f"{len(peers)} peers (0..{len(peers) - 1})")
        self.intake, self.on_report, self.max_body = intake, on_report, max_body
        self.peers, self.slot = tuple(peers), slot
        self._flight = threading.Condition()
        self._busy, self._closing = 0, False
        self._http = _server(self, host, port, listen)
        self.host, self.port = host, int(self._http.server_address[1])
        self.grpc_port: int | None = None
        self._grpc: Any = None
        if grpc_port is not None:
            self._grpc, self.grpc_port = _grpc_server(self, host, grpc_port)
        self._thread = threading.Thread(target=self._http.serve_forever, args=(_POLL_S,),
                                        name="footprint-receive", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://{_bracketed(self.host)}:{self.port}"

    def start(self) -> Receiver:
        self._thread.start()
        if self._grpc is not None:
            self._grpc.start()
        return self

    def deliver(self, plain: bytes, signal: Signal, fmt: Format) -> int:
        """Take one inflated body; the HTTP status to answer. With ``peers`` (one per worker,
        this one at ``slot``), each trace goes to the worker that owns it: the others' shares
        are handed on at once and taken here meanwhile; 503 (the sender retries) unless
        every share was stored."""
        with self._flight:
            if self._closing:
                return 503  # stopping: the sender retries (another worker, or after restart)
            self._busy += 1
        try:
            return self._deliver(plain, signal, fmt)
        finally:
            with self._flight:
                self._busy -= 1
                self._flight.notify_all()

    def _deliver(self, plain: bytes, signal: Signal, fmt: Format) -> int:
        shares = split_body(plain, signal, fmt, workers=len(self.peers) or 1,
                            home=self.slot if self.peers else 0)
        away = [Forward(self.peers[j], share, signal, fmt) for j, share in enumerate(shares)
                if share is not None and j != (self.slot if self.peers else 0)]
        mine = shares[self.slot if self.peers else 0]
        bad = False
        if mine is not None:  # answered once stored raw; mapped on the intake's thread
            refused = self.intake.submit(mine, signal=signal, fmt=fmt, done=self.reported)
            if refused is not None:
                self.reported(refused)
                bad = any(why.startswith("corrupt") for why in refused.problems)
        handed = all([f.ok() for f in away])
        return 400 if bad else 200 if handed else 503

    def take_grpc(self, body: bytes, signal: Signal) -> None:
        """One gRPC export: OK once stored raw, mapped on the intake's thread."""
        refused = self.intake.submit(body, signal=signal, fmt="pb", done=self.reported)
        if refused is not None:
            self.reported(refused)

    def refuse(self, why: str) -> None:
        self.reported(self.intake.count(BatchReport(problems={why: 1})))

    def reported(self, report: BatchReport) -> None:
        if self.on_report is not None:
            try:
                self.on_report(report)
            except Exception as exc:  # a reporting hook never stops the receiver
                _log.warning("receive: on_report failed (%s)", exc)

    def halt(self) -> None:
        """Stop serving (a request that still comes on an open connection is answered
        503: the sender retries) and wait for the requests being taken; the intake stays
        open."""
        with self._flight:
            self._closing = True
        self._http.shutdown()
        self._http.server_close()
        if self._grpc is not None:
            self._grpc.stop(grace=1.0).wait()
        with self._flight:
            self._flight.wait_for(lambda: self._busy == 0)

    def stop(self) -> BatchReport:
        """Stop serving, map what is still waiting, and write it all down."""
        self.halt()
        return self.intake.close()


def _server(receiver: Receiver, host: str, port: int,
            listen: socket.socket | None) -> _Server:
    """The HTTP server: bound to ``host:port``, or serving ``listen`` (a socket a parent
    process bound and listens on, shared by its workers)."""
    handler = type("Handler", (_Handler,), {"receiver": receiver})
    kind = _Server6 if ":" in host else _Server
    if listen is None:
        return kind((host, port), handler)
    server = kind(listen.getsockname()[:2], handler, bind_and_activate=False)
    server.socket.close()
    # another process may take the connection its select() woke for: never wait in accept()
    listen.setblocking(False)
    server.socket = listen
    return server


def _grpc_server(receiver: Receiver, host: str, port: int) -> tuple[Any, int]:
    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            receiver.take_grpc(request.SerializeToString(), "traces")
            return trace_service_pb2.ExportTraceServiceResponse()

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            receiver.take_grpc(request.SerializeToString(), "logs")
            return logs_service_pb2.ExportLogsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(  # type: ignore[no-untyped-call]
        Traces(), server)
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(  # type: ignore[no-untyped-call]
        Logs(), server)
    bound = server.add_insecure_port(f"{_bracketed(host)}:{port}")
    return server, bound
