"""How real OpenAI-compatible servers stream tool calls, as fixtures for the tests.

Each shape turns whole tool calls (``{"id", "type", "function": {"name",
"arguments"}}``) into the ``delta.tool_calls`` items of successive chunks, as
that server's documentation and observed output show them:

- ``openai``: the first chunk of a call has its index, id, type and name with
  empty arguments; later chunks have the index and an argument fragment only.
- ``llamacpp``: llama-cpp-python's server repeats the index, id, type *and
  name* in every chunk, each with the next argument fragment.
- ``vllm``: the first chunk has the index, id, type and name, and no
  ``arguments`` key; later chunks repeat the index and id with a fragment.
- ``ollama``: each call whole in one chunk, every call of the reply in the
  same chunk, with no ``index`` (Ollama's ``/v1`` before 0.5).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["SHAPES", "call_chunks"]

SHAPES = ("openai", "llamacpp", "vllm", "ollama")


def _pieces(text: str, size: int = 4) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def call_chunks(shape: str, calls: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The ``delta.tool_calls`` list of each chunk carrying ``calls``, in ``shape``."""
    if shape == "ollama":
        yield [{"id": c["id"], "type": "function", "function": dict(c["function"])}
               for c in calls]
        return
    for index, call in enumerate(calls):
        name, args = call["function"]["name"], call["function"]["arguments"]
        head = {"index": index, "id": call["id"], "type": "function"}
        if shape == "openai":
            yield [{**head, "function": {"name": name, "arguments": ""}}]
            yield from ([{"index": index, "function": {"arguments": p}}] for p in _pieces(args))
        elif shape == "llamacpp":
            yield from ([{**head, "function": {"name": name, "arguments": p}}]
                        for p in _pieces(args))
        elif shape == "vllm":
            yield [{**head, "function": {"name": name}}]
            yield from ([{"index": index, "id": call["id"], "function": {"arguments": p}}]
                        for p in _pieces(args))
        else:
            raise ValueError(f"no stream shape {shape!r}; pick one of {SHAPES}")
