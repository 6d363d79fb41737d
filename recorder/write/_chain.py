"""The audit chain (format ``footprint-chain/2``): canonical bytes, row checks, heads.

Canonical bytes of record *n* (UTF-8, no BOM, no whitespace anywhere)::

    C_n = {"envelope":E,"payload":P}

``E`` is the envelope as a JSON array of its eleven values in this order:
``schema_version, run_id, seq, ts, type, turn, iteration, step_id,
parent_step, trace_id, span_id``. Each value is ``null`` (``None``), a
decimal integer (``-`` for negatives, no ``+``, no leading zeros), or a JSON
string in which only ``"``, ``\\`` and U+0000..U+001F are escaped
(``\\b \\t \\n \\f \\r`` short, the rest ``\\u00xx`` in lowercase hex) and every
other code point is raw UTF-8. ``E`` is spelled from the values as stored.

``P`` is the stored ``payload`` text, byte for byte as stored (the writer
spells it as sorted-keys compact JSON, blob references in place of large
text). It is spliced in verbatim, so verification never re-encodes a
payload and one flipped byte in it changes everything below.

Each run's records, in seq order, are bound two ways:

* **Heads** (the strength): a running SHA-256 over the run's records as
  netstrings, ``<len(C_n)>:<C_n>,`` one after another. After every batch
  it writes, and after every 64th record of the run (unless the batch
  holds more than 1,024 of the run's records), the writer stores the
  digest so far in the ``chain`` table with the seq of the record it ends
  on. Changing, adding, removing or reordering any byte of any record
  (envelope or payload) changes every later head.
* **Row checks** (the pointer): each row stores ``row_check`` = CRC-32
  of ``P_n``, and as ``prev_check`` the ``row_check`` of the run's previous
  record (0 before the first).
  They name the exact seq of an edited payload (``hash mismatch``), of a
  record edited and re-checked (the next seq: ``chain broken``), and of a
  removed one (``missing record``). CRC-32 finds changes, it does not
  resist forgery: a forger who re-checks every later row still breaks the
  next head, and ``verify`` then names the first seq after the last good
  head (in an interactive run, at most 64 records before the change).

**The end.** A run's terminal event (``run.end``, ``run.error``) always
ends a head: the writer cuts one right at its seq, so the head stored
there commits every record up to the end. Nothing may follow the end but
the record types in :data:`AFTER_END_TYPES` (appended after the end by a
documented API, chained and headed like any record); ``verify`` names
any other record after the end, headed or not.

**Keys.** Without a secret, anyone who can write the store can recompute
heads: the chain then proves the store is as its writer left it only
against accidents and against edits that leave the heads alone. With a
key (``ParquetSink(chain_key=…)`` or ``$FOOTPRINT_CHAIN_KEY``, kept outside
the store), each stored head is ``HMAC-SHA256(key, digest)`` instead of
the digest, in format :data:`KEYED_FORMAT`; verifying with the key then
refuses any head a forger computed, and any plain head among keyed ones.

Seqs the writer never received (recorder overflow, a processor's DROP) are
bridged: the next received record follows the last one written.

:func:`envelope_canonical`, :func:`record_canonical`, :func:`frame` and
:func:`row_check` spell it all by hand (the reference, used by ``verify``);
the writer computes the same bytes columnwise (``recorder.write._link``).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import zlib
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

from footprint.events import AFTER_END_TYPES as FEEDBACK_AFTER_END

__all__ = [
    "AFTER_END_TYPES",
    "CHAIN_FORMAT",
    "ENVELOPE_ORDER",
    "KEYED_FORMAT",
    "KEY_ENV",
    "canonical_json",
    "chain_key",
    "envelope_canonical",
    "envelope_values_canonical",
    "extend_checks",
    "frame",
    "keyed_head",
    "record_canonical",
    "row_check",
    "stretches",
]

CHAIN_FORMAT = "footprint-chain/2"
"""The name of the rules above; a reader that meets another format refuses to judge it."""

KEYED_FORMAT = "footprint-chain/2+hmac-sha256"
"""The rules above with each stored head ``HMAC-SHA256(key, digest)`` (see **Keys**)."""

AFTER_END_TYPES: frozenset[str] = FEEDBACK_AFTER_END
"""Record types a documented API appends to a run after its terminal event (the hook: a
type added here, e.g. a person's feedback on an answer, may follow the end; it is chained
and headed like any record, so with a key only the key holder can add one). Any other
record after the end is named by ``verify``."""

KEY_ENV = "FOOTPRINT_CHAIN_KEY"
"""The environment variable a writer and ``footprint verify`` take the chain key from."""

_MIN_KEY = 16


def chain_key(key: bytes | str | None, *, origin: str = "chain_key") -> bytes | None:
    """``key`` as bytes (text as UTF-8), ``None`` for none; at least 16 bytes, else
    :class:`ValueError` naming ``origin``."""
    if key is None:
        return None
    raw = key.encode("utf-8") if isinstance(key, str) else key
    if not isinstance(raw, bytes) or len(raw) < _MIN_KEY:
        shown = f"{len(raw)} bytes" if isinstance(raw, bytes) else repr(type(key).__name__)
        raise ValueError(f"{origin}: a chain key must be at least {_MIN_KEY} bytes, got "
                         f"{shown}; e.g. `python -c 'import secrets; print(secrets."
                         "token_hex(32))'`, kept outside the store")
    return raw


def keyed_head(key: bytes | None, digest: bytes) -> bytes:
    """The head stored for ``digest``: the digest itself, or its HMAC-SHA256 under ``key``."""
    return digest if key is None else hmac.new(key, digest, hashlib.sha256).digest()

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


_ENVELOPE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                     check_circular=False)


def envelope_values_canonical(values: Sequence[str | int | None], *,
                              typed: bool = False) -> str:
    """``E`` from the envelope values in canonical order, by the C JSON encoder: the same
    bytes as :func:`envelope_canonical` for str, int and None values (it escapes exactly
    ``"``, ``\\`` and U+0000..U+001F, short forms first, others lowercase ``\\u00xx``) at a
    tenth of the cost; a property test holds the two to each other. ``typed=True`` skips
    the type check, for values read from the store's typed (int64, string) columns."""
    if not typed:
        for value in values:
            if value is not None and type(value) is not str and type(value) is not int:
                raise TypeError(f"envelope value {value!r} is neither str, int nor None")
    return _ENVELOPE_ENCODER.encode(list(values))


def record_canonical(envelope: str | bytes, payload: str | bytes) -> bytes:
    """The canonical bytes ``{"envelope":E,"payload":P}`` of one stored record."""
    env = envelope if isinstance(envelope, bytes) else envelope.encode("utf-8")
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    return b"".join((_RECORD_HEAD, env, _RECORD_MID, body, b"}"))


def frame(canonical: bytes) -> bytes:
    """One record as it enters its run's head: the netstring ``<len>:<bytes>,``."""
    return b"%d:%s," % (len(canonical), canonical)


def row_check(payload: str | bytes) -> int:
    """``row_check`` of a record: the CRC-32 of its payload bytes."""
    return zlib.crc32(payload if isinstance(payload, bytes) else payload.encode("utf-8"))


def extend_checks(
    checks: dict[str, int], runs: Sequence[str], payloads: Sequence[bytes]
) -> tuple[list[int], list[int]]:
    """Each row's ``prev_check`` and ``row_check``, continuing ``checks`` (updated in place:
    ``run_id -> row_check`` of the run's last row). Row ``i`` is run ``runs[i]`` with
    payload ``payloads[i]``, in emit order."""
    if len(runs) != len(payloads):
        raise ValueError(f"{len(runs)} runs and {len(payloads)} payloads; pass one of each "
                         "per row")
    if not runs:
        return [], []
    after = list(map(zlib.crc32, payloads))
    before = [0, *after[:-1]]  # right within a stretch of one run; fixed at each start
    for run, start, end in stretches(runs):
        before[start] = checks.get(run, 0)
        checks[run] = after[end - 1]
    return before, after


def stretches(runs: Sequence[str]) -> list[tuple[str, int, int]]:
    """``(run_id, start, end)`` of each stretch of equal run ids, in order."""
    out, start = [], 0
    for run, group in itertools.groupby(runs):
        end = start + len(list(group))
        out.append((run, start, end))
        start = end
    return out
