"""Helpers every store command shares: opening the store, resolving RUN, printing tables."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lens.playback._terminal import terminal_safe

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["MAX_COUNT", "chain_key_from", "clip", "count_arg", "key_file_option", "open_from",
           "seal_after_arg", "seconds_arg", "table", "terminal_safe", "time_limit_arg"]

MAX_COUNT = 1_000_000_000  # the largest count an option takes (a --limit, --seeds, …)


def count_arg(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``[low, high]``, else a one-line usage error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text[:24]!r} is out of range; use {low}..{high}")
        return value

    parse.__name__ = "count"
    return parse


def _seconds_in(text: str, zero: str | None) -> float:
    """``text`` as seconds, at most a day: above 0, or 0 too when ``zero`` says what 0 means."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if zero is None and not 0 < value <= 86_400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text[:24]!r} is out of range; use 0 < SECONDS <= 86400")
    if zero is not None and not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError(f"{text[:24]!r} is out of range; use 0 <= SECONDS "
                                         f"<= 86400 (0: {zero})")
    return value


def seconds_arg(text: str) -> float:
    """An argparse ``type``: a positive, finite number of seconds (at most a day)."""
    return _seconds_in(text, None)


def time_limit_arg(text: str) -> float:
    """An argparse ``type``: a time limit in seconds, ``0`` for none (at most a day)."""
    return _seconds_in(text, "no limit")


def seal_after_arg(text: str) -> float:
    """An argparse ``type``: ``receive --seal-after``, ``0`` sealing each export's file."""
    return _seconds_in(text, "a file per export")


def key_file_option(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--key-file FILE``: the chain key ``what`` needs for a keyed run."""
    parser.add_argument("--key-file", metavar="FILE", default=None,
                        help=f"the chain key the run was recorded with (default: "
                             f"$FOOTPRINT_CHAIN_KEY); {what}")


def chain_key_from(path: str | None) -> bytes | None:
    """The chain key from ``--key-file`` (its bytes, one trailing newline dropped), else
    ``$FOOTPRINT_CHAIN_KEY``, else ``None``."""
    import os

    from footprint._errors import ConfigError
    from recorder.write._chain import KEY_ENV

    if path is None:
        text = os.environ.get(KEY_ENV)
        return text.encode("utf-8") if text else None
    try:
        with open(path, "rb") as file:
            data = file.read(1 << 16)
    except OSError as exc:
        raise ConfigError(f"--key-file {path!r}: {exc.strerror or exc}; pass the file that "
                          "holds the chain key") from None
    return data[:-2] if data.endswith(b"\r\n") else data.removesuffix(b"\n")


def open_from(args: argparse.Namespace) -> Store:
    """The store named by ``--store`` (or the default); each unreadable file it skips,
    now or when a later read meets it, is one ``footprint: warning:`` line on stderr."""
    import warnings

    from recorder import StoreWarning, open_store

    shown = warnings.showwarning

    def one_line(message: Warning | str, category: type[Warning], *rest: object,
                 **named: object) -> None:
        if issubclass(category, StoreWarning):
            import sys

            print(f"footprint: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *rest, **named)  # type: ignore[arg-type]

    warnings.showwarning = one_line
    warnings.simplefilter("always", StoreWarning)
    return open_store(args.store)


def clip(value: object, width: int = 70) -> str:
    """One line of at most ``width`` characters, control characters escaped
    (``lens.playback._stream.clip``, imported on first use: the event catalog it needs
    costs a command that prints no event ~70 ms)."""
    from lens.playback._stream import clip as clipped

    return clipped(value, width)


def terminal_columns() -> int | None:
    """The terminal's width when stdout is one; ``None`` when piped (print full width)."""
    import shutil
    import sys

    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


_MIN_COLUMN = 6
"""No column is narrowed below this (or its heading, when shorter) to fit a terminal."""


def _fitted(columns: Sequence[str], widths: list[int], fit: int) -> list[int]:
    """``widths`` narrowed, widest first, until a line with two-space gaps fits ``fit``; the
    first column (a run id, a key to type) is never narrowed."""
    floors = [min(max(len(c), _MIN_COLUMN), w) for c, w in zip(columns, widths, strict=True)]
    floors[0] = widths[0]
    widths = list(widths)
    excess = sum(widths) + 2 * (len(widths) - 1) - fit
    while excess > 0:
        i = max(range(len(widths)), key=lambda k: widths[k] - floors[k])
        if widths[i] <= floors[i]:
            break  # every column at its floor: the line stays wider than the terminal
        widths[i] -= 1
        excess -= 1
    return widths


def table(columns: Sequence[str], rows: Sequence[Sequence[object]], width: int = 60,
          fit: int | None = None) -> str:
    """A plain aligned text table, each cell at most ``width`` characters; ``fit``: the line
    width to narrow the widest columns to (``…`` where a cell is cut; default: the terminal's
    width on a terminal, none when piped)."""
    fit = terminal_columns() if fit is None else fit
    cells = [[clip(c, width) for c in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    if fit is not None and sum(widths) + 2 * (len(widths) - 1) > fit:
        widths = _fitted(columns, widths, fit)
        cells = [[clip(c, w) for c, w in zip(row, widths, strict=True)] for row in rows]
        columns = [clip(c, w) for c, w in zip(columns, widths, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                 for row in cells)
    return "\n".join(lines)


def jsonable(value: object) -> object:
    """A cell as JSON has it: dates in ISO 8601, bytes in hex, anything else unknown as text."""
    import datetime as dt

    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, int | float | str | bool | type(None)):
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)
