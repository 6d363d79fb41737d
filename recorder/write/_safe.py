"""The escaped form of a value JSON cannot spell: what the store keeps instead of losing it.

The writer's fast and reference paths refuse three kinds of value; rather
than lose the event (and, before, its whole batch), each is stored in a
documented escaped form:

* a lone surrogate in a text (``"\\ud800"``, legal in JSON any web API may
  send, never valid UTF-8) is spelled as the six characters ``\\ud800``
  (Python's ``backslashreplace``): readable, and the code point survives;
* a value that is not JSON (``Decimal``, ``datetime``, ``bytes``, ``set``,
  any object) becomes ``{"$nonjson": "<type>", "repr": "<repr, cut>"}``;
* nesting deeper than :data:`MAX_DEPTH` levels is cut there, the cut subtree
  becoming ``{"$nonjson": "too deep", "repr": "<repr, cut>"}``.

A float that is not finite becomes ``null`` (as the fast path spells it).
"""

from __future__ import annotations

import dataclasses
import math
import reprlib
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "NONJSON_KEY", "safe_text", "safe_value"]

NONJSON_KEY = "$nonjson"
"""The key of an escaped non-JSON value: ``{"$nonjson": type name, "repr": text}``."""
MAX_DEPTH = 100
"""Levels of nesting kept in an escaped payload; deeper subtrees are escaped whole."""

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 200
_REPR.maxlevel = 3


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate spelled ``\\udxxx`` (unchanged when it has none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _escaped(kind: str, value: object) -> dict[str, str]:
    return {NONJSON_KEY: kind, "repr": safe_text(_REPR.repr(value))}


def safe_value(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data, every unspellable part in its escaped form."""
    if isinstance(value, str):
        return safe_text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        return _escaped("too deep", value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {safe_text(str(k)): safe_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_value(v, depth + 1) for v in value]
    return _escaped(type(value).__qualname__, value)
