"""The replay seam: where a host may take tool results from instead of running tools.

A ``ToolSource`` is consulted before a plain tool runs; when it serves a
``ServedTool`` the tool is not called and the served text, status, error
flag and effects stand in for its result. A lens replaying a recorded run
serves the recorded results this way, so the agent re-executes offline.
Model calls have the matching seam ``Agent(model_source=...)``: any
``Provider`` that answers every model call in place of the serving brain's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from footprint.injection import ToolStatus
from footprint.providers import ToolCall

__all__ = ["ServedTool", "ToolSource"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedTool:
    """A tool's result served without running it.

    ``text`` is the tool's own result (without the host's step note);
    ``effects`` are raw effect mappings, as a tool's ``{content, effects}``
    envelope would return them.
    """

    text: str
    status: ToolStatus | None = None
    error: bool = False
    effects: tuple[Mapping[str, Any], ...] = ()


@runtime_checkable
class ToolSource(Protocol):
    """Serves a plain tool call's result, or ``None`` to let the tool run."""

    def serve(self, call: ToolCall) -> ServedTool | None: ...
