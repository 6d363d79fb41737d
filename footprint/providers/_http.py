"""JSON over HTTP for the wire providers: retries, backoff and clear errors.

httpx is imported when a provider's pool builds its client, so importing
footprint stays light.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from footprint._errors import ConfigError, RunError
from footprint.providers._pool import HttpPool

if TYPE_CHECKING:
    import httpx

__all__ = [
    "Backoff",
    "Failure",
    "HttpCall",
    "decode_body",
    "malformed_error",
    "names_malformed_request",
    "post_json",
    "retry_after_seconds",
    "send_with_retries",
    "server_message",
    "status_failure",
    "timeout_failure",
    "transport_failure",
]

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})

MALFORMED_MARKERS = (
    "malformed",
    "invalid request",
    "invalid_request",
    "failed to parse",
    "could not parse",
    "parse error",
    "json.exception",
    "type must be",
    "validation error",
    "field required",
    "invalid value",
    "invalid type",
    "nonetype",
)
"""Words by which a 5xx body says the request itself was bad (not worth a retry)."""


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
    deadline: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
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
    """The error message a server put in its body (whole), or the body itself (its first
    2000 characters: an HTML error page is not a message)."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return body.strip()[:2000]
    found = _find_message(data)
    return found if found is not None else body.strip()[:2000]


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


async def post_json(call: HttpCall, backoff: Backoff, pool: HttpPool) -> Mapping[str, Any]:
    """POST ``call.payload`` and return the decoded JSON object.

    Each attempt may take at most ``call.timeout`` seconds in all (connect,
    send, and the whole reply: a server that streams bytes forever times out
    too). Retries 429, 408/409/425, 5xx, time-outs and connection errors up to
    ``call.max_retries`` times — not a 5xx whose body names a malformed
    request, which would fail again; ``call.deadline``, when set, bounds every
    attempt and wait together, and a retry that could not finish before it is
    not started. Any failure becomes a :class:`RunError` that names the fix.
    The connection comes from ``pool``'s client, reused across calls and event loops.
    """
    return await send_with_retries(call, backoff, pool, _attempt)


Attempt: TypeAlias = Callable[["httpx.AsyncClient", HttpCall], Awaitable["T | Failure"]]


async def send_with_retries(
    call: HttpCall, backoff: Backoff, pool: HttpPool, attempt: Attempt[T]
) -> T:
    """Run ``attempt`` until it succeeds, retries run out or the deadline passes."""
    tries = _Tries(limit=call.max_retries + 1)
    if call.deadline is None:
        return await _attempts(pool, call, backoff, tries, attempt)
    try:
        async with asyncio.timeout(call.deadline):
            return await _attempts(pool, call, backoff, tries, attempt)
    except TimeoutError:
        raise _past_deadline(call, tries) from None


@dataclass(slots=True, kw_only=True)
class _Tries:
    """Attempts allowed and made so far, and when the first began."""

    limit: int
    made: int = 0
    started: float = 0.0
    last: Failure | None = None


async def _attempts(
    pool: HttpPool, call: HttpCall, backoff: Backoff, tries: _Tries,
    attempt: Attempt[T],
) -> T:
    loop = asyncio.get_running_loop()
    tries.started = loop.time()
    last: Failure | None = None
    while tries.made < tries.limit:
        tries.made += 1
        outcome = await _bounded_attempt(pool, call, attempt)
        if not isinstance(outcome, Failure):
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


async def _bounded_attempt(pool: HttpPool, call: HttpCall, attempt: Attempt[T]) -> T | Failure:
    """One attempt on the pooled client; cut at ``call.timeout`` (the cut cancels it
    where it runs, closing its connection)."""
    try:
        async with asyncio.timeout(call.timeout):
            return await pool.call(lambda client: attempt(client, call))
    except TimeoutError:
        return Failure(
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


async def _attempt(client: httpx.AsyncClient, call: HttpCall) -> Mapping[str, Any] | Failure:
    import httpx

    try:
        response = await client.post(call.url, json=dict(call.payload),
                                     headers=dict(call.headers), timeout=call.timeout)
    except httpx.TimeoutException as exc:
        return timeout_failure(exc)
    except httpx.TransportError as exc:
        return Failure(status=None, detail=_transport_detail(exc))
    text = response.text
    failed = status_failure(call, int(response.status_code), text, response.headers)
    return failed if failed is not None else decode_body(call, text)


def timeout_failure(exc: Exception) -> Failure:
    """A retryable failure for an httpx time-out."""
    return Failure(status=None, detail=f"timed out ({type(exc).__name__})", timed_out=True)


def transport_failure(exc: Exception) -> Failure:
    """A retryable failure for a connection error."""
    return Failure(status=None, detail=_transport_detail(exc))


def status_failure(
    call: HttpCall, status: int, text: str, headers: Mapping[str, str]
) -> Failure | None:
    """None for a success; a retryable failure; or a raised RunError for the rest.

    Retried: 429, 408/409/425 and 5xx. Not retried: any other 4xx, and a 5xx
    whose body names a malformed request (llama.cpp answers ``"content": null``
    with HTTP 500 ``Failed to parse messages: ...``): sending it again fails again.
    """
    if status < 400:
        return None
    if status >= 500 and names_malformed_request(text):
        raise malformed_error(call, f"HTTP {status}", text)
    if status == 429 or status >= 500 or status in RETRYABLE_STATUS:
        wait = retry_after_seconds(headers.get("retry-after"))
        return Failure(status=status, detail=server_message(text), retry_after=wait)
    raise _client_error(call, status, text)


def names_malformed_request(body: str) -> bool:
    """Whether an error body says the request itself was malformed."""
    lowered = body.lower()
    return any(marker in lowered for marker in MALFORMED_MARKERS)


def malformed_error(call: HttpCall, what: str, body: str) -> RunError:
    """The error for a reply that names a malformed request (never retried)."""
    return RunError(
        f"provider {call.provider!r} got {what} from {call.url} naming a malformed "
        f"request ({server_message(body)!r}); not retried, as the same request would fail "
        f"again: the server at {call.base_url} cannot read what was sent (model "
        f"{call.model!r}); check that it supports this request's fields, or report the bug"
    )


def _transport_detail(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "refused" in lowered or "errno 111" in lowered or "connect call failed" in lowered:
        return "connection refused"
    return f"{type(exc).__name__}: {text}"


def decode_body(call: HttpCall, text: str) -> Mapping[str, Any]:
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


def _exhausted(call: HttpCall, last: Failure, attempts: int) -> RunError:
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
