"""The reference host: ``Agent``, tools, and the injectable clock."""

from footprint.agent._agent import Agent, RunResult
from footprint.agent._clock import Clock, StepClock, SystemClock, new_run_id
from footprint.agent._ids import IdSource, RandomIds, SeededIds, uuid7
from footprint.agent._sources import ServedTool, ToolSource
from footprint.agent._tools import schema_from_signature, tool, validate_args

__all__ = [
    "Agent",
    "Clock",
    "IdSource",
    "RandomIds",
    "RunResult",
    "SeededIds",
    "ServedTool",
    "StepClock",
    "SystemClock",
    "ToolSource",
    "new_run_id",
    "schema_from_signature",
    "tool",
    "uuid7",
    "validate_args",
]
