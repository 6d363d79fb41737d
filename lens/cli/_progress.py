"""A rich progress bar on stderr for long CLI work (shown only on a terminal)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

__all__ = ["intake_progress", "progress"]


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


@contextmanager
def intake_progress(label: str) -> Iterator[Callable[[float, Mapping[str, int]], None]]:
    """Yield ``update(share, totals)``: a bar of the input read, with the spans, runs
    and spans a second so far (from the intake's ``totals``); on stderr, only on a
    terminal, cleared at the end."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    started = time.monotonic()
    with Progress(TextColumn(label), BarColumn(), TaskProgressColumn(),
                  TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=1.0, stats="")

        def update(share: float, totals: Mapping[str, int]) -> None:
            spans, runs = totals.get("spans", 0), totals.get("runs", 0)
            rate = spans / max(time.monotonic() - started, 1e-9)
            bar.update(task, completed=share,
                       stats=f"{spans:,} spans, {runs:,} runs, {rate:,.0f} spans/s")
        yield update
