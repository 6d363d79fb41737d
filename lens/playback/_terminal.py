"""Recorded text made safe to print on a terminal (no imports: the fast commands use it)."""

from __future__ import annotations

__all__ = ["terminal_safe"]

_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))
             if chr(c) not in "\n\t"}
"""C0 and C1 control characters (bar newline and tab) -> their ``\\xNN`` escape."""


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN``: a
    recorded answer, error or label (a model's or a server's words) prints as what it is,
    and cannot clear the screen, move the cursor or retitle the terminal (ESC sequences)."""
    return text.replace("\r\n", "\n").translate(_CONTROLS)
