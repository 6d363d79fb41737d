"""The error hierarchy: one root, a developer-mistake branch and a run-time branch."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["ConfigError", "FootprintError", "RunError", "did_you_mean"]


class FootprintError(Exception):
    """Root of every error footprint raises on purpose."""


class ConfigError(FootprintError, ValueError):
    """A developer mistake found at definition or build time.

    The message quotes the bad value and names the fix.
    """


class RunError(FootprintError):
    """A failure while running (a provider, a tool, a broken invariant)."""


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return `` (did you mean 'x'?)`` for the closest choice, or ``""``.

    Used to end error messages about unknown ids.
    """
    pool = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(value, pool, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
