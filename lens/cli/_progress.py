"""A rich progress bar on stderr for long CLI work (shown only on a terminal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress"]


@contextmanager
def progress(label: str, total: int | None, unit: str = "") -> Iterator[Callable[[int], None]]:
    """Yield ``advance_to(done)``; a bar of ``total`` steps while the block runs.

    Drawn on stderr and cleared at the end, so stdout stays clean for pipes;
    off when stderr is not a terminal.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    columns = (TextColumn(f"{label}"), BarColumn(), MofNCompleteColumn(),
               TextColumn(unit), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done: bar.update(task, completed=done)
