"""Readers upcast records written under older schema versions to the current one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from footprint._errors import ConfigError
from footprint.events import SCHEMA_VERSION

__all__ = ["UPCASTERS", "upcast"]

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

UPCASTERS: Mapping[int, Upcaster] = {}
"""``version -> step``: each step turns a version-``n`` record into a version ``n + 1`` one.

Empty while only version 1 exists; a schema change adds its step here.
"""


def upcast(
    record: dict[str, Any],
    steps: Mapping[int, Upcaster] = UPCASTERS,
    current: int = SCHEMA_VERSION,
) -> dict[str, Any]:
    """Apply the steps from the record's ``schema_version`` up to ``current``."""
    stated = record.get("schema_version")
    version = current if stated is None else int(stated)
    if version > current:
        raise ConfigError(
            f"record seq {record.get('seq')!r} has schema_version {version!r}, newer than this "
            f"reader ({current}); upgrade footprint-lens to read it"
        )
    while version < current:
        step = steps.get(version)
        if step is None:
            raise ConfigError(
                f"no upcaster from schema_version {version!r} to {version + 1}; "
                "register one in recorder.store._upcast.UPCASTERS"
            )
        record = step(record)
        version += 1
        record["schema_version"] = version
    return record
