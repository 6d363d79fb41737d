"""The reference host: ``Agent``, tools, and the injectable clock."""

from footprint.agent._agent import DEFAULT_TOOL_TIMEOUT_S, Agent, RunResult
from footprint.agent._clock import Clock, StepClock, SystemClock, new_run_id
from footprint.agent._ids import IdSource, RandomIds, SeededIds, uuid7
from footprint.agent._results import ToolReturn, is_envelope
from footprint.agent._sources import ServedTool, ToolSource
from footprint.agent._tools import schema_from_signature, tool, validate_args

__all__ = [
    "DEFAULT_TOOL_TIMEOUT_S",
    "Agent",
    "Clock",
    "IdSource",
    "RandomIds",
    "RunResult",
    "SeededIds",
    "ServedTool",
    "StepClock",
    "SystemClock",
    "ToolReturn",
    "ToolSource",
    "is_envelope",
    "new_run_id",
    "schema_from_signature",
    "tool",
    "uuid7",
    "validate_args",
]
