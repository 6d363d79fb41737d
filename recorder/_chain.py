"""The audit chain: canonical bytes of a stored record, the SHA-256 link, and what is stored.

Canonical bytes of record *n* (UTF-8, no BOM, no whitespace anywhere)::

    {"envelope":E,"payload":P}

``E`` is the envelope as a JSON array of its eleven values in this order:
``schema_version, run_id, seq, ts, type, turn, iteration, step_id,
parent_step, trace_id, span_id``. Each value is ``null`` (``None``), a
decimal integer (``-`` for negatives, no ``+``, no leading zeros), or a JSON
string in which only ``"``, ``\\`` and U+0000..U+001F are escaped
(``\\b \\t \\n \\f \\r`` short, the rest ``\\u00xx`` in lowercase hex) and every
other code point is raw UTF-8. Any other value (a bool, a float) is refused.

``P`` is the stored ``payload`` text, byte for byte as stored (today the
writer spells it as sorted-keys compact JSON, blob references in place of
large text). It is spliced in verbatim, so verification never re-encodes a
payload and one flipped byte in it changes the hash.

The link is full SHA-256, run by run in emit (= seq) order::

    hash_n = sha256(hash_(n-1) || canonical_n),   hash_(-1) = GENESIS (32 zero bytes)

Seqs the writer never received (recorder overflow, a processor's DROP) are
bridged: the next received record links to the last one written.

What the store keeps: per row ``prev_hash`` and ``hash`` are the first
:data:`LOCATOR_BYTES` bytes of ``hash_(n-1)`` and ``hash_n`` — enough to name
the first broken seq and tell a changed record (``hash mismatch``) from a
broken link (``chain broken``); and per run per sealed segment the
``chain`` table keeps the full 32-byte ``hash_n`` of its last record, so
the whole chain is still checked at full SHA-256 strength.

:func:`envelope_canonical` and :func:`record_canonical` spell the bytes by
hand (the reference, used by ``verify``); :func:`envelope_json` is the
writer's fast spelling of the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

import orjson

__all__ = [
    "ENVELOPE_ORDER",
    "GENESIS",
    "LOCATOR_BYTES",
    "canonical_json",
    "envelope_canonical",
    "envelope_json",
    "extend_chains",
    "link_hash",
    "locator",
    "record_canonical",
]

GENESIS = bytes(32)
"""``hash_(-1)``: the chain value before a run's first record (32 zero bytes)."""

LOCATOR_BYTES = 8
"""How many leading bytes of each link hash a row stores in ``prev_hash`` / ``hash``."""

ENVELOPE_ORDER: tuple[str, ...] = (
    "schema_version", "run_id", "seq", "ts", "type", "turn", "iteration",
    "step_id", "parent_step", "trace_id", "span_id",
)
"""The envelope values in canonical order (the store's column order)."""

_RECORD_HEAD = b'{"envelope":'
_RECORD_MID = b',"payload":'


def canonical_json(value: object) -> str:
    """Sorted-keys, compact, UTF-8 JSON: the spelling every content hash is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _js(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return str(encode_basestring(value))
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"envelope value {value!r} is neither str, int nor None")
    return str(value)


def envelope_canonical(env: Mapping[str, Any]) -> str:
    """``E`` spelled by hand from a mapping of the envelope fields (the reference)."""
    return "[" + ",".join(_js(env[k]) for k in ENVELOPE_ORDER) + "]"


def envelope_json(values: Sequence[object]) -> bytes:
    """``E`` from the envelope values in :data:`ENVELOPE_ORDER` (the writer's fast path).

    The caller guarantees every value is ``None``, an exact ``int`` or a
    ``str`` (``orjson`` refuses lone surrogates); for those this equals
    ``envelope_canonical(...).encode()`` byte for byte.
    """
    return orjson.dumps(values)


def record_canonical(envelope: str | bytes, payload: str | bytes) -> bytes:
    """The canonical bytes ``{"envelope":E,"payload":P}`` of one stored record."""
    env = envelope if isinstance(envelope, bytes) else envelope.encode("utf-8")
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    return b"".join((_RECORD_HEAD, env, _RECORD_MID, body, b"}"))


def link_hash(prev: bytes, canonical: bytes) -> bytes:
    """``sha256(hash_(n-1) || canonical_n)``: the full 32-byte link."""
    return hashlib.sha256(prev + canonical).digest()


def locator(digest: bytes) -> bytes:
    """What a row stores of a link hash: its first :data:`LOCATOR_BYTES` bytes."""
    return digest[:LOCATOR_BYTES]


def extend_chains(
    heads: dict[str, bytes],
    runs: Sequence[str],
    envelopes: Iterable[bytes | bytearray],
    payloads: Sequence[bytes | bytearray],
) -> tuple[list[bytes], list[bytes]]:
    """Link a batch onto ``heads`` (``run -> hash_n``, updated in place), in order.

    Returns each row's full ``hash_(n-1)`` and ``hash_n`` (the store keeps
    their :func:`locator`). If ``envelopes`` raises midway, ``heads`` is
    put back as it was and the error propagates.
    """
    sha256, genesis, get = hashlib.sha256, GENESIS, heads.get
    prevs: list[bytes] = []
    links: list[bytes] = []
    try:
        for run, env, body in zip(runs, envelopes, payloads):  # noqa: B905 (lazy envelopes)
            prev = get(run, genesis)
            digest = sha256(b'%s{"envelope":%s,"payload":%s}' % (prev, env, body)).digest()
            heads[run] = digest
            prevs.append(prev)
            links.append(digest)
    except BaseException:
        for run, prev in reversed(list(zip(runs, prevs))):  # noqa: B905
            heads[run] = prev
        raise
    return prevs, links
