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

from recorder.write._extract import BLOB_KEY
from recorder.write._hot import HOT_FIELDS, HOT_PATHS

__all__ = ["DERIVED_COLUMNS", "DerivedCheck", "derived_mismatch"]

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
    return DerivedCheck().mismatch(payload, stored) if isinstance(payload, dict) \
        else DERIVED_COLUMNS[0]


class DerivedCheck:
    """:func:`derived_mismatch` over many rows: the hot-column paths that can apply are
    worked out once per set of payload keys (a run has a handful), and the stored values
    are compared with the expected ones in one tuple comparison."""

    __slots__ = ("_plans",)

    def __init__(self) -> None:
        self._plans: dict[tuple[str, ...], tuple[tuple[int, tuple[tuple[str, ...], ...]],
                                                  ...]] = {}

    def _plan(self, keys: tuple[str, ...]) -> tuple[tuple[int, tuple[tuple[str, ...], ...]],
                                                     ...]:
        plan = self._plans.get(keys)
        if plan is None:
            present = set(keys)
            plan = tuple((i, usable) for i, column in enumerate(HOT_FIELDS)
                         if (usable := tuple(p for p in HOT_PATHS[column] if p[0] in present)))
            self._plans[keys] = plan
        return plan

    def mismatch(self, payload: dict[str, Any], stored: Sequence[object]) -> str | None:
        """The first derived column ``stored`` (in :data:`DERIVED_COLUMNS` order) gets wrong."""
        expected: list[object] = [None] * len(HOT_FIELDS)
        blobs = False
        for i, paths in self._plan(tuple(payload)):
            value = expected[i] = _lifted(payload, paths)
            blobs = blobs or type(value) is dict
        admitted = payload.get("admitted_by")
        expected.append(admitted if type(admitted) is int else None)
        if not blobs and tuple(expected) == tuple(stored):
            return None
        for column, value, want in zip(DERIVED_COLUMNS, stored, expected, strict=True):
            if not _agrees(value, want):
                return column
        return None
