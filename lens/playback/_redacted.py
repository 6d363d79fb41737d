"""Values a recording kept only as a redaction marker: told apart, and checked against text.

A marker is ``[redacted hmac-sha256:<key id>:<hex>]`` (keyed: only the key
holder can check a value against it) or an older, unkeyed ``[redacted
sha256:<hex>]`` / ``[sha256:<hex>]`` (``recorder.write._redact_key``). The
key is the reader's: ``$FOOTPRINT_REDACT_KEY``, else the key file
(``~/.config/footprint/redact.key``); none is ever made here.
"""

from __future__ import annotations

from footprint._errors import ConfigError
from recorder.write._redact_key import (
    KEYED_SCHEME,
    REDACT_KEY_ENV,
    Marker,
    RedactionKey,
    default_key_file,
    known_redaction_key,
    parse_marker,
    unkeyed_digest,
)

__all__ = ["digest_like", "matches", "parse_marker", "require_key"]


def require_key(marker: Marker, what: str) -> RedactionKey | None:
    """The key ``marker`` was made with (``None`` for an unkeyed marker); a one-line
    :class:`ConfigError` naming ``what`` and the fix when it is not at hand."""
    if marker.scheme != KEYED_SCHEME:
        return None
    key = known_redaction_key()
    if key is None or key.key_id != marker.key_id:
        have = f"the key at hand is {key.key_id}" if key is not None else "no key is at hand"
        raise ConfigError(
            f"{what} is redacted under key id {marker.key_id} and {have}; set "
            f"${REDACT_KEY_ENV} to the key it was recorded with (or keep it in "
            f"{default_key_file()}) so a value can be compared with it")
    return key


def digest_like(marker: Marker, text: str, *, what: str = "the recorded value") -> str:
    """The digest ``text`` would have in ``marker``'s scheme and key (:func:`require_key`)."""
    key = require_key(marker, what)
    if key is None:
        return unkeyed_digest(text)
    found = parse_marker(key.marker(text))
    return found.digest if found is not None else ""


def matches(value: object, text: str) -> bool:
    """Whether ``value`` is a marker ``text`` hashes to (``False`` when its key is not at
    hand: nothing can be told equal then)."""
    marker = parse_marker(value)
    if marker is None:
        return False
    try:
        return digest_like(marker, text) == marker.digest
    except ConfigError:
        return False
