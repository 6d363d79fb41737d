"""Streamed replies (server-sent events) for the wire providers.

A streamed call is sent, retried and bounded exactly as a plain one
(:func:`~footprint.providers._http.send_with_retries`): ``timeout`` bounds
one attempt, stream included, and ``deadline`` every attempt together, so a
stream that never ends is cut between two chunks when a limit passes. Each
``data:`` event is decoded and fed to a provider's assembler, which builds the
body the plain call would have returned. A server that ignores ``stream``
and answers one JSON body is read as a plain reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from footprint.providers._http import (
    Backoff,
    Failure,
    HttpCall,
    decode_body,
    malformed_error,
    names_malformed_request,
    send_with_retries,
    server_message,
    status_failure,
    timeout_failure,
    transport_failure,
)
from footprint.providers._pool import HttpPool

if TYPE_CHECKING:
    import httpx

__all__ = ["Assembler", "Streamed", "post_stream"]


class Assembler(Protocol):
    """Builds one reply body from a stream's decoded events."""

    def feed(self, event: Mapping[str, Any]) -> None: ...

    def body(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Streamed:
    """The assembled body, and seconds from the call's start to its first chunk."""

    body: Mapping[str, Any]
    first_chunk_s: float | None


async def post_stream(
    call: HttpCall, backoff: Backoff, pool: HttpPool, assembler: Callable[[], Assembler]
) -> Streamed:
    """POST ``call.payload`` (which asks for a stream) and assemble the events."""
    started = asyncio.get_running_loop().time()

    async def attempt(client: httpx.AsyncClient, c: HttpCall) -> Streamed | Failure:
        return await _stream_attempt(client, c, assembler(), started)

    return await send_with_retries(call, backoff, pool, attempt)


async def _stream_attempt(
    client: httpx.AsyncClient, call: HttpCall, into: Assembler, started: float
) -> Streamed | Failure:
    import httpx

    try:
        async with client.stream("POST", call.url, json=dict(call.payload),
                                 headers=dict(call.headers), timeout=call.timeout) as response:
            if response.status_code >= 400 or "event-stream" not in response.headers.get(
                "content-type", ""
            ):
                text = (await response.aread()).decode("utf-8", errors="replace")
                failed = status_failure(call, response.status_code, text, response.headers)
                return failed if failed is not None else Streamed(
                    body=decode_body(call, text), first_chunk_s=None)
            return await _read_events(call, response, into, started)
    except httpx.TimeoutException as exc:
        return timeout_failure(exc)
    except httpx.TransportError as exc:
        return transport_failure(exc)


async def _read_events(
    call: HttpCall, response: httpx.Response, into: Assembler, started: float
) -> Streamed | Failure:
    loop = asyncio.get_running_loop()
    first: float | None = None
    data: list[str] = []
    done = False
    async for line in response.aiter_lines():
        if done:
            continue  # read the body to its end, so the connection goes back to the pool
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            continue
        if line or not data:
            continue  # an event name, an id, a comment, or a keep-alive
        text, data = "\n".join(data), []
        if first is None:
            first = loop.time() - started
        done = text.strip() == "[DONE]"
        failed = None if done else _feed(call, into, text)
        if failed is not None:
            return failed
    if data and data != ["[DONE]"]:
        failed = _feed(call, into, "\n".join(data))
        if failed is not None:
            return failed
    return Streamed(body=into.body(), first_chunk_s=first)


def _feed(call: HttpCall, into: Assembler, text: str) -> Failure | None:
    """Feed one event; an error event is retried, unless it names a malformed request."""
    try:
        event = json.loads(text)
    except json.JSONDecodeError:
        return Failure(status=None, detail=f"a stream event that is not JSON: {text[:120]!r}")
    if not isinstance(event, dict):
        return None
    if "error" in event and (event.get("type") in (None, "error")):
        if names_malformed_request(text):
            raise malformed_error(call, "an error event in its stream", text)
        return Failure(status=None, detail=f"error event in the stream: {server_message(text)}")
    into.feed(event)
    return None
