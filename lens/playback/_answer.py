"""What a reader says about one model reply beyond its text: its tokens, known or not,
and whether it is an answer at all (empty, a refusal, cut at its length or by a filter)."""

from __future__ import annotations

from footprint.events import LLMEnd

__all__ = ["FLAG_WORDS", "answer_flags", "flag_of", "tokens_of"]

FLAG_WORDS = {
    "refused": "the model refused (its reply is a refusal, not an answer)",
    "filtered": "the provider's content filter cut the reply (finish_reason content_filter)",
    "length": "the reply stopped at its max_tokens (finish_reason length): it may be cut short",
    "empty": "the reply is empty: no text and no tool call",
}
"""Each flag a final reply can carry, and what it means."""


def flag_of(stop_reason: str | None, content: str | None, tool_calls: int = 0) -> str | None:
    """The one flag a final reply carries (``None``: a plain answer), most telling first."""
    if stop_reason == "refusal":
        return "refused"
    if stop_reason == "content_filter":
        return "filtered"
    if stop_reason == "max_tokens":
        return "length"
    if not (content or "").strip() and not tool_calls:
        return "empty"
    return None


def answer_flags(e: LLMEnd) -> list[str]:
    """``flag: meaning`` for a reply that is not a plain answer (empty list otherwise)."""
    flag = flag_of(e.stop_reason, e.content, len(e.tool_calls))
    if flag is None:
        return []
    extra = [f"empty: {FLAG_WORDS['empty']}"] if flag != "empty" and not e.content.strip() \
        and not e.tool_calls else []
    return [f"{flag}: {e.step_id}: {FLAG_WORDS[flag]}", *extra]


def tokens_of(e: LLMEnd) -> str:
    """``in+out tokens``, or that the server reported no usage (unknown, never 0)."""
    if e.input_tokens is None or e.output_tokens is None:
        return "tokens unknown (no usage reported)"
    return f"{e.input_tokens}+{e.output_tokens} tokens"
