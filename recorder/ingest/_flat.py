"""Flattened indexed attributes (``prefix.N.rest``) read back into lists of dicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["indexed", "number"]


def indexed(attrs: Mapping[str, Any], prefix: str) -> list[tuple[int, dict[str, Any]]]:
    """Every ``prefix.N.rest = value`` as ``(N, {rest: value})``, by N.

    Gaps are kept visible (the index is returned), so a reader can tell a list the
    SDK cut at its attribute limit from a whole one.
    """
    head = prefix + "."
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        index, _, rest = key[len(head):].partition(".")
        if index.isdigit() and rest:
            groups.setdefault(int(index), {})[rest] = value
    return sorted(groups.items())


def number(value: Any) -> int:
    """An integer attribute (``0`` when absent or not a number)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return 0
