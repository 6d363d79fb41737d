"""Argument checks shared by every public constructor: one-line ``ConfigError``s naming the fix.

Each check names where it runs (``Agent(tools=...)``), quotes the bad value
briefly and says what to pass instead. A string where a list is expected is
refused (it would be read letter by letter), and so is a lone item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from footprint._errors import ConfigError

__all__ = ["brief", "check_bool", "check_callable", "check_instance", "check_list",
           "check_positive", "check_str"]


def brief(value: object, width: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``width`` characters."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real mistake
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def check_list(where: str, value: object, *, item: str, example: str) -> tuple[Any, ...]:
    """``value`` as a tuple; a string, a mapping, a lone item or a non-iterable is refused."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise ConfigError(
            f"{where} takes a list of {item}, got {type(value).__name__} {brief(value)}; "
            f"pass a list, e.g. {example}"
        )
    return tuple(value)


def check_str(where: str, value: object, *, fix: str, empty_ok: bool = False) -> str:
    """``value`` when it is a (non-empty, unless ``empty_ok``) string."""
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise ConfigError(f"{where} is {brief(value)}; {fix}")
    return value


def check_bool(where: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} is {brief(value)}; pass True or False")
    return value


def check_positive(where: str, value: object, *, example: str,
                   none_ok: bool = True) -> float | None:
    """A positive number of seconds (or other unit), or ``None`` when allowed."""
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or (
        value == float("inf")
    ):
        none = " (or None)" if none_ok else ""
        raise ConfigError(f"{where} is {brief(value)}; pass a positive number{none}, "
                          f"e.g. {example}")
    return float(value)


def check_callable(where: str, value: object, *, fix: str) -> Callable[..., Any]:
    if not callable(value):
        raise ConfigError(f"{where} is {brief(value)}, which is not callable; {fix}")
    return value


def check_instance(where: str, value: object, cls: type | tuple[type, ...], *,
                   fix: str) -> Any:
    if not isinstance(value, cls):
        raise ConfigError(f"{where} is {type(value).__name__} {brief(value)}; {fix}")
    return value
