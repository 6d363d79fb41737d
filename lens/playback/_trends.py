"""Trend charts, drawn the same way by ``footprint stats`` (plotext) and the lens's trends
screen (a ``textual-plotext`` widget's ``plt``): one line per group over the time buckets."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["draw"]


def draw(plt: Any, labels: list[str], lines: dict[str, list[float | None]]) -> None:
    """One chart on ``plt`` (plotext or a ``PlotextPlot``'s): a line per group, the
    buckets as x ticks (at most 6 labelled), gaps where a group has no value."""
    xs = list(range(len(labels)))
    for group, values in lines.items():
        points = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if points:
            plt.plot([p[0] for p in points], [p[1] for p in points], marker="braille",
                     label=group if len(lines) > 1 else None)
    step = max(1, math.ceil(len(labels) / 6))
    plt.xticks(xs[::step], labels[::step])
