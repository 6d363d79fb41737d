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
    # plotext centres the y axis of a single value (one bucket, a flat line) on it, with
    # ticks such as -0.33 under an error rate of 0; what is drawn here is never negative
    # (latency, tokens, rates, counts, dollars): such an axis runs from 0 to twice the value
    shown = [v for values in lines.values() for v in values if v is not None]
    if shown and min(shown) == max(shown) >= 0:
        plt.ylim(0.0, shown[0] * 2 or 1.0)

