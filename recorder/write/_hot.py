"""Hot columns: typed decision fields lifted out of the payload, and where each is found."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["HOT_FIELDS", "HOT_PATHS", "HotPlan", "hot_fields", "hot_plan"]

HOT_FIELDS: tuple[str, ...] = (
    "skill_id", "from_skill", "to_skill", "moved_by", "reason", "injection_id", "slot",
    "flavor", "tool_name", "tool_call_id", "model", "content_hash", "admitted_via",
)
"""Typed decision columns lifted out of the payload (``admitted_by`` is the int one)."""

HOT_PATHS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "skill_id": (("skill_id",), ("requested_id",), ("volunteered_id",)),
    "from_skill": (
        ("from_skill",), ("from_skill_id",), ("cursor_move", "from_skill"), ("current_skill_id",)
    ),
    "to_skill": (("to",), ("won_id",), ("cursor_move", "to"), ("target_skill_id",),
                 ("winner", "target")),
    "moved_by": (("by",), ("cursor_move", "by")),
    "reason": (("reason",), ("chosen",)),
    "injection_id": (("injection_id",),),
    "slot": (("slot",),),
    "flavor": (("flavor",), ("source",)),
    "tool_name": (("tool_name",), ("winner", "tool_name")),
    "tool_call_id": (("tool_call_id",), ("winner", "tool_call_id")),
    "model": (("model",), ("to_model",)),
    "content_hash": (("content_hash",),),
    "admitted_via": (("admitted_via",),),
}
"""Where each hot column is found in a payload: the first key path holding a string wins."""

HotPlan = tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]


def hot_plan(keys: Iterable[str]) -> HotPlan:
    """The hot-column paths that can apply to a payload with these top-level keys."""
    present = set(keys)
    plan = []
    for column, paths in HOT_PATHS.items():
        usable = tuple(p for p in paths if p[0] in present)
        if usable:
            plan.append((column, usable))
    return tuple(plan)


def hot_fields(payload: Mapping[str, Any], plan: HotPlan | None = None) -> dict[str, str | None]:
    """The hot string columns of one record (``None`` where the event has no such field).

    The reference spelling over a ``to_record`` dict; the writer lifts the
    same values straight off the event objects (``recorder.write._extract``).
    """
    out: dict[str, str | None] = dict.fromkeys(HOT_FIELDS)
    for column, paths in plan if plan is not None else hot_plan(payload):
        for path in paths:
            value = payload.get(path[0])
            for key in path[1:]:
                value = value.get(key) if type(value) is dict else None
            if type(value) is str:
                out[column] = value
                break
    return out
