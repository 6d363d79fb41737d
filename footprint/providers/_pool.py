"""One pooled httpx client per wire provider, reused by every call.

Building an ``httpx.AsyncClient`` builds an SSL context (~27 ms of CPU, even
for plain http), so the process builds one SSL context per setting (trust the
environment or not, and the environment's ``SSL_CERT_FILE``/``SSL_CERT_DIR``)
and every client reuses it: a client then costs ~0.1 ms. A provider keeps its
client and reuses its connections. A client's connections belong to the event
loop that opened them: a call from another loop (``asyncio.run`` again, as
``Agent.run_sync`` does) gets a fresh client — on the shared SSL context — and
the stale one is dropped with its loop. ``aclose()`` closes the client in the
loop that owns it; the provider stays usable and opens a new client on its
next call.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
from typing import TYPE_CHECKING

from footprint._errors import RunError

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = ["HttpPool", "PooledClient", "shared_ssl_context"]

_SSL: dict[tuple[bool, str | None, str | None], ssl.SSLContext] = {}
_SSL_LOCK = threading.Lock()


def shared_ssl_context(trust_env: bool) -> ssl.SSLContext:
    """The process's SSL context for clients built with ``trust_env`` (built once per
    setting; with ``trust_env``, per ``SSL_CERT_FILE``/``SSL_CERT_DIR`` as httpx reads them)."""
    import httpx

    key = (trust_env, os.environ.get("SSL_CERT_FILE") if trust_env else None,
           os.environ.get("SSL_CERT_DIR") if trust_env else None)
    with _SSL_LOCK:
        context = _SSL.get(key)
        if context is None:
            context = _SSL[key] = httpx.create_ssl_context(verify=True, trust_env=trust_env)
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


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class HttpPool:
    """Lazily built ``httpx.AsyncClient``s, one per event loop that calls.

    Runs in several threads (each with its own loop) each get their own
    client; a client whose loop has closed is dropped when the next one is
    built. ``built`` counts the clients made so far.
    """

    __slots__ = ("_clients", "_trust_env", "built")

    def __init__(self, *, trust_env: bool) -> None:
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._trust_env = trust_env
        self.built = 0

    def client(self) -> httpx.AsyncClient:
        """The client for the running loop, built on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is not None and not client.is_closed:
            return client
        import httpx

        _remember_missing_sniffio()
        for stale in [old for old in self._clients if old.is_closed()]:
            self._clients.pop(stale, None)  # its connections went with that loop
        client = self._clients[loop] = httpx.AsyncClient(
            trust_env=self._trust_env, verify=shared_ssl_context(self._trust_env))
        self.built += 1
        return client

    async def aclose(self) -> None:
        """Close the running loop's client and forget the clients of closed loops."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        for stale in [old for old in self._clients if old.is_closed()]:
            self._clients.pop(stale, None)
        if client is not None:
            await client.aclose()

    def close(self) -> None:
        """Close every client from code without a running loop.

        A client whose loop has closed is dropped; one whose loop is idle is
        closed in that loop; one whose loop runs in another thread is left
        to ``aclose`` there.
        """
        if _loop_running():
            raise RunError(
                "close() was called inside a running event loop; "
                "use `await provider.aclose()` there instead"
            )
        for loop, client in list(self._clients.items()):
            if loop.is_running():
                continue
            self._clients.pop(loop, None)
            if not loop.is_closed():
                loop.run_until_complete(client.aclose())


class PooledClient:
    """What a wire provider shares: one pooled HTTP client (``self._pool``), reused by
    every call and released on request."""

    _pool: HttpPool

    @property
    def pool(self) -> HttpPool:
        """The pooled HTTP client this provider reuses."""
        return self._pool

    async def aclose(self) -> None:
        """Close the pooled client; the next call opens a new one."""
        await self._pool.aclose()

    def close(self) -> None:
        """``aclose`` for code without a running event loop."""
        self._pool.close()
