"""A wire provider's handle on the process's pooled HTTP client.

The connections themselves live in :mod:`footprint.providers._transport`: one
client per base URL and setting for the whole process, on a loop of its own,
so ``run_sync`` after ``run_sync`` (a new event loop each time), and calls
from several threads, reuse the same connections. Building an
``httpx.AsyncClient`` builds an SSL context (~27 ms of CPU, even for plain
http): the process builds one per setting and every client reuses it.
``aclose()`` closes the connections to this provider's server; the provider
stays usable and its next call opens a new one. Whatever is still open is
closed at interpreter exit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from footprint._errors import RunError
from footprint.providers._transport import client_key, shared_ssl_context, transport

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpPool", "PooledClient", "shared_ssl_context"]

T = TypeVar("T")


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class HttpPool:
    """The process's pooled client for one base URL and ``trust_env`` setting.

    ``built`` counts the clients the process has made for this key so far.
    """

    __slots__ = ("_base_url", "_trust_env")

    def __init__(self, *, base_url: str, trust_env: bool) -> None:
        self._base_url = base_url
        self._trust_env = trust_env

    @property
    def built(self) -> int:
        """Clients made so far for this pool's key (process-wide)."""
        return transport().built.get(client_key(self._base_url, self._trust_env), 0)

    async def call(self, work: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
        """Run ``work`` with the pooled client; cancelling the await cancels it (and
        closes its connection)."""
        return await transport().call(client_key(self._base_url, self._trust_env), work)

    async def aclose(self) -> None:
        """Close the connections to this pool's server (the next call opens new ones)."""
        await asyncio.wrap_future(
            transport().forget(client_key(self._base_url, self._trust_env)))

    def close(self) -> None:
        """``aclose`` for code without a running event loop."""
        if _loop_running():
            raise RunError(
                "close() was called inside a running event loop; "
                "use `await provider.aclose()` there instead"
            )
        transport().forget(client_key(self._base_url, self._trust_env)).result()


class PooledClient:
    """What a wire provider shares: the process's pooled HTTP client (``self._pool``),
    reused by every call and released on request."""

    _pool: HttpPool

    @property
    def pool(self) -> HttpPool:
        """The pooled HTTP client this provider reuses."""
        return self._pool

    async def aclose(self) -> None:
        """Close the pooled connections to this provider's server; the next call opens
        new ones."""
        await self._pool.aclose()

    def close(self) -> None:
        """``aclose`` for code without a running event loop."""
        self._pool.close()
