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
writer's fast spelling of the same ``E`` (the writer spells many at once
with one ``orjson`` call, byte for byte the same), and
:func:`extend_chains` links ``E`` and ``P`` as given, without re-encoding.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
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
    envelopes: Sequence[bytes],
    payloads: Sequence[bytes],
) -> tuple[list[bytes], list[bytes]]:
    """Link a batch onto ``heads`` (``run -> hash_n``, updated in place), in order.

    Row ``i`` is run ``runs[i]`` with ``E`` = ``envelopes[i]`` and ``P`` =
    ``payloads[i]``. Returns each row's full ``hash_(n-1)`` and ``hash_n``
    (the store keeps their :func:`locator`). Every input is spelled before
    the call, so nothing here fails halfway.
    """
    if not len(runs) == len(envelopes) == len(payloads):
        raise ValueError(f"{len(runs)} runs, {len(envelopes)} envelopes and {len(payloads)} "
                         "payloads; pass one of each per row")
    if not runs:
        return [], []
    if len(set(runs)) == 1:  # the usual batch: one run, one tight loop
        return _link_run(heads, runs[0], envelopes, payloads)
    stretches = [(run, len(list(group))) for run, group in itertools.groupby(runs)]
    if len(stretches) * 16 > len(runs):  # runs interleaved row by row
        return _link_mixed(heads, runs, envelopes, payloads)
    prevs: list[bytes] = []
    links: list[bytes] = []
    at = 0
    for run, count in stretches:  # runs in long stretches: link stretch by stretch
        before, after = _link_run(heads, run, envelopes[at:at + count], payloads[at:at + count])
        prevs += before
        links += after
        at += count
    return prevs, links


def _link_run(
    heads: dict[str, bytes], run: str, envelopes: Sequence[bytes], payloads: Sequence[bytes]
) -> tuple[list[bytes], list[bytes]]:
    sha256 = hashlib.sha256
    first = prev = heads.get(run, GENESIS)
    links = [prev := sha256(b'%s{"envelope":%s,"payload":%s}' % (prev, env, body)).digest()
             for env, body in zip(envelopes, payloads, strict=True)]
    heads[run] = links[-1]
    return [first, *links[:-1]], links


def _link_mixed(
    heads: dict[str, bytes], runs: Sequence[str], envelopes: Sequence[bytes],
    payloads: Sequence[bytes],
) -> tuple[list[bytes], list[bytes]]:
    sha256, get = hashlib.sha256, heads.get
    prevs: list[bytes] = []
    links: list[bytes] = []
    for run, env, body in zip(runs, envelopes, payloads, strict=True):
        prev = get(run, GENESIS)
        digest = sha256(b'%s{"envelope":%s,"payload":%s}' % (prev, env, body)).digest()
        heads[run] = digest
        prevs.append(prev)
        links.append(digest)
    return prevs, links
