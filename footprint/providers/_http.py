"""JSON over HTTP for the wire providers: retries, backoff and clear errors.

httpx is imported inside :func:`post_json`, so importing footprint stays light.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from footprint._errors import ConfigError, RunError

if TYPE_CHECKING:
    import httpx

__all__ = ["Backoff", "HttpCall", "post_json", "retry_after_seconds", "server_message"]

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


@dataclass(frozen=True, slots=True, kw_only=True)
class Backoff:
    """Exponential backoff with jitter between retries.

    The delay before retry ``n`` (1-based) is ``base * multiplier**(n-1)``,
    spread by ``±jitter`` (a fraction) using ``rng``, capped at
    ``max_delay``. A server's ``Retry-After`` replaces the computed delay
    (still capped). ``sleep`` is awaited with the delay; inject a fake in tests.
    """

    base: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 30.0
    jitter: float = 0.25
    rng: random.Random = field(default_factory=random.Random)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    def __post_init__(self) -> None:
        for label, value in (("base", self.base), ("max_delay", self.max_delay)):
            if value < 0:
                raise ConfigError(f"Backoff {label}={value!r} is negative; use a value >= 0")
        if self.multiplier < 1:
            raise ConfigError(f"Backoff multiplier={self.multiplier!r} is below 1; use >= 1")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"Backoff jitter={self.jitter!r} is outside [0, 1]; use e.g. 0.25")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        raw = self.base * self.multiplier ** (retry - 1)
        spread = 1.0 + self.jitter * (2.0 * self.rng.random() - 1.0)
        return min(raw * spread, self.max_delay)


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpCall:
    """One POST as a provider makes it, with what its error messages need."""

    provider: str
    url: str
    base_url: str
    model: str
    payload: Mapping[str, Any]
    headers: Mapping[str, str]
    timeout: float
    max_retries: int
    api_key_env: str
    has_api_key: bool
    trust_env: bool = True
    deadline: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Failure:
    """A retryable failure of one attempt."""

    status: int | None
    detail: str
    retry_after: float | None = None
    timed_out: bool = False


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Parse a ``Retry-After`` header: delta seconds or an HTTP date."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    moment = now if now is not None else datetime.now(UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - moment).total_seconds(), 0.0)


def server_message(body: str) -> str:
    """The error message a server put in its body, or the body itself (trimmed)."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return body.strip()[:300]
    found = _find_message(data)
    return found if found is not None else body.strip()[:300]


def _find_message(data: object) -> str | None:
    if isinstance(data, str):
        return data
    if not isinstance(data, dict):
        return None
    for key in ("error", "message", "detail"):
        if key in data:
            found = _find_message(data[key])
            if found is not None:
                return found
    return None


async def post_json(call: HttpCall, backoff: Backoff) -> Mapping[str, Any]:
    """POST ``call.payload`` and return the decoded JSON object.

    Each attempt may take at most ``call.timeout`` seconds in all (connect,
    send, and the whole reply: a server that streams bytes forever times out
    too). Retries 429, 408/409/425, 5xx, time-outs and connection errors up to
    ``call.max_retries`` times; ``call.deadline``, when set, bounds every
    attempt and wait together, and a retry that could not finish before it is
    not started. Any failure becomes a :class:`RunError` that names the fix.
    """
    import httpx

    tries = _Tries(limit=call.max_retries + 1)
    async with httpx.AsyncClient(timeout=call.timeout, trust_env=call.trust_env) as client:
        if call.deadline is None:
            return await _attempts(client, call, backoff, tries)
        try:
            async with asyncio.timeout(call.deadline):
                return await _attempts(client, call, backoff, tries)
        except TimeoutError:
            raise _past_deadline(call, tries) from None


@dataclass(slots=True, kw_only=True)
class _Tries:
    """Attempts allowed and made so far, and when the first began."""

    limit: int
    made: int = 0
    started: float = 0.0
    last: _Failure | None = None


async def _attempts(
    client: httpx.AsyncClient, call: HttpCall, backoff: Backoff, tries: _Tries
) -> Mapping[str, Any]:
    loop = asyncio.get_running_loop()
    tries.started = loop.time()
    last: _Failure | None = None
    while tries.made < tries.limit:
        tries.made += 1
        outcome = await _bounded_attempt(client, call)
        if not isinstance(outcome, _Failure):
            return outcome
        last = tries.last = outcome
        if tries.made < tries.limit:
            wait = backoff.delay(tries.made, outcome.retry_after)
            if call.deadline is not None and (
                loop.time() - tries.started + wait >= call.deadline
            ):
                raise _past_deadline(call, tries)
            await backoff.sleep(wait)
    assert last is not None
    raise _exhausted(call, last, tries.limit)


async def _bounded_attempt(
    client: httpx.AsyncClient, call: HttpCall
) -> Mapping[str, Any] | _Failure:
    try:
        async with asyncio.timeout(call.timeout):
            return await _attempt(client, call)
    except TimeoutError:
        return _Failure(
            status=None, detail=f"no complete reply within {call.timeout}s", timed_out=True
        )


def _past_deadline(call: HttpCall, tries: _Tries) -> RunError:
    """The deadline ended the retries: the cause is the last upstream error, when one came."""
    head = (f"provider {call.provider!r} passed its deadline of {call.deadline}s (deadline=) "
            f"after {tries.made} attempt(s) to {call.url}")
    last = tries.last
    if last is not None and last.status is not None:
        return RunError(
            f"{head}; the last attempt got HTTP {last.status} ({last.detail[:300]!r}): the "
            f"server at {call.base_url} is failing; retry later or raise deadline="
        )
    cause = f" (last attempt: {last.detail})" if last is not None else ""
    return RunError(
        f"{head}{cause}; the server at {call.base_url} did not finish a reply in time: "
        "raise deadline=, lower max_tokens=, or check the server"
    )


async def _attempt(client: httpx.AsyncClient, call: HttpCall) -> Mapping[str, Any] | _Failure:
    import httpx

    try:
        response = await client.post(call.url, json=dict(call.payload), headers=dict(call.headers))
    except httpx.TimeoutException as exc:
        return _Failure(status=None, detail=f"timed out ({type(exc).__name__})", timed_out=True)
    except httpx.TransportError as exc:
        return _Failure(status=None, detail=_transport_detail(exc))
    status = int(response.status_code)
    text = response.text
    if status == 429 or status >= 500 or status in RETRYABLE_STATUS:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        return _Failure(status=status, detail=server_message(text), retry_after=wait)
    if status >= 400:
        raise _client_error(call, status, text)
    return _decode_body(call, text)


def _transport_detail(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "refused" in lowered or "errno 111" in lowered or "connect call failed" in lowered:
        return "connection refused"
    return f"{type(exc).__name__}: {text}"


def _decode_body(call: HttpCall, text: str) -> Mapping[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise RunError(
            f"provider {call.provider!r} got a reply from {call.url} that is not a JSON object: "
            f"{text[:200]!r}; check that base_url={call.base_url!r} points at "
            "a server that speaks this provider's wire format"
        )
    return data


def _client_error(call: HttpCall, status: int, body: str) -> RunError:
    message = server_message(body)
    if status in (401, 403):
        key_state = (
            "the API key was rejected" if call.has_api_key else "no API key was sent"
        )
        return RunError(
            f"provider {call.provider!r} got HTTP {status} from {call.url} ({message!r}): "
            f"bad or missing API key — {key_state}; set {call.api_key_env} or pass api_key=... "
            f"with a key this server accepts"
        )
    if status == 404 and _names_model(call.model, message):
        return RunError(
            f"provider {call.provider!r} does not know model {call.model!r} at {call.base_url} "
            f"(HTTP 404: {message!r}); pass a model this server serves"
        )
    if status == 404:
        return RunError(
            f"provider {call.provider!r} got HTTP 404 from {call.url} ({message!r}); check "
            f"base_url={call.base_url!r} (the endpoint path is wrong or the server is "
            "not compatible)"
        )
    return RunError(
        f"provider {call.provider!r} rejected the request with HTTP {status}: {message!r}; "
        f"fix the request the server complains about (model {call.model!r} at {call.url})"
    )


def _names_model(model: str, message: str) -> bool:
    lowered = message.lower()
    return model.lower() in lowered or "model" in lowered


def _exhausted(call: HttpCall, last: _Failure, attempts: int) -> RunError:
    if last.timed_out:
        return RunError(
            f"provider {call.provider!r} timed out after {call.timeout}s on each of "
            f"{attempts} attempts to {call.url}; is the server at {call.base_url} "
            "overloaded? raise timeout= or max_retries="
        )
    if last.status is None:
        return RunError(
            f"provider {call.provider!r} could not connect to {call.url} after "
            f"{attempts} attempts ({last.detail}); is the server running at {call.base_url}?"
        )
    return RunError(
        f"provider {call.provider!r} gave up after {attempts} attempts to {call.url}: "
        f"last status HTTP {last.status} ({last.detail!r}); retry later or raise max_retries= "
        f"(now {call.max_retries})"
    )
