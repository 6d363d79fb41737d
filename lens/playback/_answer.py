"""What a reader says about one model reply beyond its text: its tokens, known or not."""

from __future__ import annotations

from footprint.events import LLMEnd

__all__ = ["tokens_of"]


def tokens_of(e: LLMEnd) -> str:
    """``in+out tokens``, or that the server reported no usage (unknown, never 0)."""
    if e.input_tokens is None or e.output_tokens is None:
        return "tokens unknown (no usage reported)"
    return f"{e.input_tokens}+{e.output_tokens} tokens"
