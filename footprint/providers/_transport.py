"""The process's HTTP connections: one client per server and setting, for every loop.

An ``httpx.AsyncClient``'s connections belong to the event loop that opened
them, and ``Agent.run_sync`` makes a new loop for every run: a client per
loop meant a new client and a new TCP connection (and TLS handshake) per
``run_sync``. Here the process keeps one event loop of its own, on a daemon
thread started on the first call, and one ``httpx.AsyncClient`` per key (base
URL, ``trust_env`` and the environment's CA settings) on it. A call from any
loop, in any thread, runs its attempt on that loop
(``asyncio.run_coroutine_threadsafe``) and awaits the result in its own: the
connections outlive the caller's loop and are reused by the next
``run_sync``. Cancelling the caller's await (a time-out, a deadline, Ctrl-C)
cancels the attempt on the transport loop, which closes its connection, so
the server stops generating.

The clients are closed at interpreter exit (``atexit``) and by
:func:`close_connections`; a forked child starts with no transport of its own
and builds one on its first call. This is the provider layer's process state;
the engine's decision layer holds none.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import importlib.util
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = ["ClientKey", "Transport", "client_key", "close_connections", "shared_ssl_context",
           "transport"]

T = TypeVar("T")

ClientKey = tuple[str, bool, str | None, str | None]
"""(base URL, trust_env, SSL_CERT_FILE, SSL_CERT_DIR): what makes two clients differ."""

_SSL: dict[tuple[bool, str | None, str | None], ssl.SSLContext] = {}
_LOCK = threading.Lock()


def client_key(base_url: str, trust_env: bool) -> ClientKey:
    """The key of the client serving ``base_url`` (with ``trust_env``, the CA settings
    the environment names now, as httpx reads them)."""
    env = os.environ
    return (base_url, trust_env, env.get("SSL_CERT_FILE") if trust_env else None,
            env.get("SSL_CERT_DIR") if trust_env else None)


def shared_ssl_context(trust_env: bool) -> ssl.SSLContext:
    """The process's SSL context for clients built with ``trust_env`` (built once per
    setting; with ``trust_env``, per ``SSL_CERT_FILE``/``SSL_CERT_DIR`` as httpx reads them)."""
    import httpx

    _, _, cafile, capath = client_key("", trust_env)
    with _LOCK:
        context = _SSL.get((trust_env, cafile, capath))
        if context is None:
            context = _SSL[(trust_env, cafile, capath)] = httpx.create_ssl_context(
                verify=True, trust_env=trust_env)
        return context


def _remember_missing_sniffio() -> None:
    """Record once that ``sniffio`` is not installed, when it is not.

    httpcore tries ``import sniffio`` four times per request; when it is
    absent, each failed import searches every ``sys.path`` entry again, which
    cost ~0.6 ms of CPU per call on the project's machine (half of a call).
    ``sys.modules[name] = None`` is Python's own mark for "known missing":
    the import then fails at once, as it would have anyway.
    """
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


class Transport:
    """One event loop on a daemon thread and the clients that live on it.

    ``built`` counts the clients made per key. Every client is touched only
    on the transport's own loop, so no lock guards them.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._clients: dict[ClientKey, httpx.AsyncClient] = {}
        self.built: dict[ClientKey, int] = {}
        self._thread = threading.Thread(target=self._serve, name="footprint-http",
                                        daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _client(self, key: ClientKey) -> httpx.AsyncClient:
        client = self._clients.get(key)
        if client is not None and not client.is_closed:
            return client
        import httpx

        _remember_missing_sniffio()
        client = self._clients[key] = httpx.AsyncClient(
            trust_env=key[1], verify=shared_ssl_context(key[1]))
        self.built[key] = self.built.get(key, 0) + 1
        return client

    def submit(self, key: ClientKey, work: Callable[[httpx.AsyncClient], Awaitable[T]]
               ) -> concurrent.futures.Future[T]:
        """Run ``work`` with the key's client on the transport loop."""
        async def run() -> T:
            return await work(self._client(key))

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    async def call(self, key: ClientKey,
                   work: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
        """``submit``, awaited from the caller's loop (cancelling it cancels the work)."""
        return await asyncio.wrap_future(self.submit(key, work))

    def forget(self, key: ClientKey | None) -> concurrent.futures.Future[None]:
        """Close the key's client (every client for ``None``); the next call opens a new one."""
        async def run() -> None:
            keys = list(self._clients) if key is None else [key]
            for each in keys:
                client = self._clients.pop(each, None)
                if client is not None:
                    await client.aclose()

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    def stop(self, timeout: float = 5.0) -> None:
        """Close every client, then the loop and its thread (waits at most ``timeout``)."""
        if not self._thread.is_alive():
            return
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            self.forget(None).result(timeout)  # else the process's exit closes the sockets
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._loop.close()


_TRANSPORT: list[Transport] = []


def transport() -> Transport:
    """The process's transport, started on first use."""
    with _LOCK:
        if not _TRANSPORT:
            _TRANSPORT.append(Transport())
        return _TRANSPORT[0]


def close_connections() -> None:
    """Close every pooled HTTP connection of this process and stop its transport thread
    (run at interpreter exit; a later call starts a new one)."""
    with _LOCK:
        running = _TRANSPORT.pop() if _TRANSPORT else None
    if running is not None:
        running.stop()


def _forget_after_fork() -> None:
    """A forked child has no transport thread: it starts its own on its first call."""
    _TRANSPORT.clear()
    global _LOCK
    _LOCK = threading.Lock()


atexit.register(close_connections)
os.register_at_fork(after_in_child=_forget_after_fork)
