"""A rich progress bar on stderr for long CLI work (shown only on a terminal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress"]


@contextmanager
def progress(label: str, total: int | None, unit: str = "", *,
             rate: bool = False) -> Iterator[Callable[..., None]]:
    """Yield ``advance_to(done, total=None)``; a bar of ``total`` steps while the block
    runs (``total`` given to ``advance_to`` replaces it; ``rate``: steps a second shown).

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
    speed = (TextColumn(f"{{task.fields[speed]}} {unit}/s"),) if rate else ()
    columns = (TextColumn(f"{label}"), BarColumn(), MofNCompleteColumn(),
               TextColumn(unit), *speed, TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=total, speed="…")
        job = bar.tasks[-1]

        def advance(done: int, total: int | None = None) -> None:
            per_s = job.speed
            if total is not None:
                bar.update(task, total=total)
            bar.update(task, completed=done, speed="…" if per_s is None else f"{per_s:.3g}")

        yield advance
