"""Model providers and the provider port.

In-process models (:class:`ScriptedModel`, :class:`FunctionModel`) for tests
and examples; wire providers (:class:`OpenAIChat`, :class:`AnthropicMessages`)
that speak HTTP through httpx, imported only when a call is made.
"""

from footprint.providers._anthropic import AnthropicMessages
from footprint.providers._arguments import (
    ARGUMENTS_ERROR_KEY,
    RAW_ARGUMENTS_KEY,
    estimate_tokens,
    raw_arguments_of,
)
from footprint.providers._http import Backoff
from footprint.providers._openai import OpenAIChat
from footprint.providers._scripted import FunctionModel, Reply, ScriptedModel, call
from footprint.providers._types import (
    LLMRequest,
    LLMResponse,
    Message,
    Provider,
    StopReason,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "ARGUMENTS_ERROR_KEY",
    "RAW_ARGUMENTS_KEY",
    "AnthropicMessages",
    "Backoff",
    "FunctionModel",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "OpenAIChat",
    "Provider",
    "Reply",
    "ScriptedModel",
    "StopReason",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "call",
    "estimate_tokens",
    "raw_arguments_of",
]
