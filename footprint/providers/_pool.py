"""One pooled httpx client per wire provider, reused by every call.

Building an ``httpx.AsyncClient`` builds an SSL context (~20 ms, even for plain
http), so a provider keeps one and reuses its connections. A client's
connections belong to the event loop that opened them: a call from another
loop (``asyncio.run`` again, as ``Agent.run_sync`` does) gets a fresh client,
and the stale one is dropped with its loop. ``aclose()`` closes the client in
the loop that owns it; the provider stays usable and opens a new client on its
next call.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from typing import TYPE_CHECKING

from footprint._errors import RunError

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpPool"]


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


class HttpPool:
    """A lazily built ``httpx.AsyncClient`` and the loop it serves.

    ``built`` counts the clients made so far (one per event loop in use).
    """

    __slots__ = ("_client", "_loop", "_trust_env", "built")

    def __init__(self, *, trust_env: bool) -> None:
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._trust_env = trust_env
        self.built = 0

    def client(self) -> httpx.AsyncClient:
        """The client for the running loop, built on first use."""
        loop = asyncio.get_running_loop()
        client = self._client
        if client is not None and self._loop is loop and not client.is_closed:
            return client
        import httpx

        _remember_missing_sniffio()
        self._client = httpx.AsyncClient(trust_env=self._trust_env)
        self._loop = loop
        self.built += 1
        return self._client

    async def aclose(self) -> None:
        """Close the client (when the running loop owns it) and forget it."""
        client, loop = self._client, self._loop
        self._client, self._loop = None, None
        if client is None:
            return
        if loop is asyncio.get_running_loop():
            await client.aclose()
        # a client of another loop: its connections went with that loop

    def close(self) -> None:
        """Close the client from code without a running loop."""
        client, loop = self._client, self._loop
        if client is None or loop is None:
            return
        if loop.is_running():
            raise RunError(
                "close() was called while the provider's event loop is running; "
                "use `await provider.aclose()` there instead"
            )
        self._client, self._loop = None, None
        if not loop.is_closed():
            loop.run_until_complete(client.aclose())
