"""The audit chain: canonical bytes of a stored record and the SHA-256 link over them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

__all__ = ["GENESIS", "canonical_json", "envelope_canonical", "link_hash", "record_canonical"]

GENESIS = bytes(32)
"""The ``prev_hash`` of a run's first record: 32 zero bytes (64 zeros in hex)."""


def canonical_json(value: object) -> str:
    """Sorted-keys, compact, UTF-8 JSON: the spelling every hash is taken over."""
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
    """Sorted-keys compact JSON of the envelope, spelled by hand (this runs per event)."""
    return (
        f'{{"iteration":{_js(env["iteration"])},"parent_step":{_js(env["parent_step"])},'
        f'"run_id":{_js(env["run_id"])},"schema_version":{_js(env["schema_version"])},'
        f'"seq":{_js(env["seq"])},"span_id":{_js(env["span_id"])},'
        f'"step_id":{_js(env["step_id"])},"trace_id":{_js(env["trace_id"])},'
        f'"ts":{_js(env["ts"])},"turn":{_js(env["turn"])},"type":{_js(env["type"])}}}'
    )


def record_canonical(envelope_json: str, payload_json: str) -> bytes:
    """The canonical bytes of one stored record: ``{"envelope":…,"payload":…}``.

    ``payload_json`` is the stored payload text, itself canonical JSON with
    blob hashes in place of blob text; it is spliced in verbatim, so one
    flipped byte in a stored payload changes the hash.
    """
    return ('{"envelope":' + envelope_json + ',"payload":' + payload_json + "}").encode("utf-8")


def link_hash(prev: bytes, canonical: bytes) -> bytes:
    """``sha256(prev_hash || canonical_bytes)``: the digest stored in ``hash``."""
    return hashlib.sha256(prev + canonical).digest()
