"""Handing a worker's share of a request to the worker that owns its traces: a plain
OTLP/HTTP POST to that worker's private loopback port, answered 200 only once the share is
stored raw there (durable), so the request is acknowledged only when every share is."""

from __future__ import annotations

import http.client
import logging
import threading
from urllib.parse import urlsplit

from recorder.ingest._raw import Format, Signal

__all__ = ["Forward"]

_log = logging.getLogger("recorder")
_KIND = {"pb": "application/x-protobuf", "json": "application/json"}
_PATH = {"traces": "/v1/traces", "logs": "/v1/logs"}
_TIMEOUT_S = 120.0


class Forward:
    """One share on its way, in a thread of its own; :meth:`ok` waits for the answer."""

    def __init__(self, endpoint: str, body: bytes, signal: Signal, fmt: Format) -> None:
        self._url = urlsplit(endpoint)
        self._body, self._signal, self._fmt = body, signal, fmt
        self._status: int | None = None
        self._thread = threading.Thread(target=self._send, daemon=True,
                                        name="footprint-receive-forward")
        self._thread.start()

    def _send(self) -> None:
        conn = http.client.HTTPConnection(self._url.hostname or "127.0.0.1", self._url.port,
                                          timeout=_TIMEOUT_S)
        try:
            conn.request("POST", _PATH[self._signal], body=self._body,
                         headers={"Content-Type": _KIND[self._fmt]})
            answer = conn.getresponse()
            answer.read()
            self._status = answer.status
        except OSError as exc:  # the owner is down (being restarted): the sender retries
            _log.warning("receive: share not handed to %s (%s)", self._url.netloc, exc)
        finally:
            conn.close()

    def ok(self) -> bool:
        """Whether the owner stored the share (answered 200)."""
        self._thread.join()
        return self._status == 200
