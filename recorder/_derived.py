"""The columns a row derives from its payload (hot columns, ``admitted_by``), re-derived.

The audit chain covers the envelope and the payload; the typed decision
columns are copies lifted out of the payload for SQL. ``verify`` re-derives
them here, so an edited column (say, ``tool_name`` in a ``tool.start`` row)
is named even though no hash covers it directly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from recorder._extract import BLOB_KEY
from recorder._hot import HOT_FIELDS, HOT_PATHS

__all__ = ["DERIVED_COLUMNS", "derived_mismatch"]

DERIVED_COLUMNS: tuple[str, ...] = (*HOT_FIELDS, "admitted_by")
"""The derived columns, in the order :func:`derived_mismatch` takes their stored values."""


def _lifted(payload: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> object:
    """The first path's value that is text (or a blob reference standing for text)."""
    for path in paths:
        value: object = payload.get(path[0])
        for key in path[1:]:
            value = value.get(key) if type(value) is dict else None
        if type(value) is str or (type(value) is dict and BLOB_KEY in value):
            return value
    return None


def _agrees(stored: object, expected: object) -> bool:
    if type(expected) is dict:  # long text moved to the blob table: compare by its hash
        return isinstance(stored, str) and (
            hashlib.sha256(stored.encode("utf-8")).hexdigest() == expected[BLOB_KEY])
    return stored == expected


def derived_mismatch(payload_text: str, stored: Sequence[object]) -> str | None:
    """The first derived column whose stored value the payload does not give, or ``None``."""
    payload = json.loads(payload_text)
    if not isinstance(payload, dict):
        return DERIVED_COLUMNS[0]
    for column, value in zip(HOT_FIELDS, stored, strict=False):
        if not _agrees(value, _lifted(payload, HOT_PATHS[column])):
            return column
    admitted = payload.get("admitted_by")
    expected = admitted if type(admitted) is int else None
    return None if stored[-1] == expected else "admitted_by"
