"""Model providers and the provider port."""

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
    "LLMRequest",
    "LLMResponse",
    "Message",
    "Provider",
    "StopReason",
    "ToolCall",
    "ToolSpec",
    "Usage",
]
