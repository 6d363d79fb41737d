"""How a store's redaction markers were made: keyed, under which key ids, or unkeyed (old).

``footprint doctor`` reports it: an unkeyed marker ``[redacted sha256:…]``
(or capture's ``[sha256:…]``) lets anyone holding the store test a guess of
the value (a card number falls to brute force), a keyed one only the holder
of its key (``recorder.write._redact_key``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recorder.store._catalog import Store

__all__ = ["MarkerCensus", "marker_census"]

_KINDS = r"\[(?:redacted )?(hmac-sha256:[0-9a-f]{8}|sha256):[0-9a-f]{64}\]"
"""The marker pattern of ``recorder.write._redact_key`` with one group: the scheme and key id."""


@dataclass(frozen=True, slots=True)
class MarkerCensus:
    """How many markers the store's events and blobs hold: ``unkeyed``, and per key id."""

    unkeyed: int = 0
    keyed: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.unkeyed + sum(self.keyed.values())


def marker_census(store: Store) -> MarkerCensus:
    """Count the markers in every payload and blob text of ``store``."""
    rows = store.rows(
        "SELECT kind, count(*) FROM ("
        " SELECT unnest(regexp_extract_all(payload, ?, 1)) AS kind FROM events"
        " UNION ALL"
        " SELECT unnest(regexp_extract_all(text, ?, 1)) AS kind FROM blobs"
        ") GROUP BY kind", [_KINDS, _KINDS])
    keyed = {str(kind).rpartition(":")[2]: int(n) for kind, n in rows
             if str(kind).startswith("hmac-sha256:")}
    unkeyed = sum(int(n) for kind, n in rows if kind == "sha256")
    return MarkerCensus(unkeyed, dict(sorted(keyed.items())))
