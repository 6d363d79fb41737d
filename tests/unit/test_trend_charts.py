"""The trend charts ``footprint stats`` and the lens's trends screen draw
(``lens.playback._trends.draw``): axes that fit what is plotted."""

from __future__ import annotations

import re

import plotext as plt
import pytest
from rich.text import Text

from lens.playback._trends import draw


def _chart(labels: list[str], lines: dict[str, list[float | None]]) -> str:
    plt.clear_figure()
    plt.plot_size(60, 12)
    draw(plt, labels, lines)
    return Text.from_ansi(str(plt.build())).plain


def _y_ticks(chart: str) -> list[float]:
    return [float(m) for m in re.findall(r"^\s*(-?[\d.]+)┤", chart, re.M)]


@pytest.mark.parametrize("lines", [
    {"all": [0.0]}, {"all": [0.125]}, {"all": [0.0, 0.0, 0.0]}, {"all": [3.0, 3.0]},
    {"a": [0.0, None], "b": [None, 0.0]}, {"all": [180.0, 200.0, 190.0]}])
def test_given_values_never_negative_when_drawn_then_no_tick_is_below_zero_and_all_show(
    lines: dict[str, list[float | None]],
) -> None:
    labels = [f"2026-01-0{k + 1}" for k in range(len(next(iter(lines.values()))))]
    ticks = _y_ticks(_chart(labels, lines))
    values = [v for vs in lines.values() for v in vs if v is not None]
    assert ticks and min(ticks) >= 0
    assert min(ticks) <= min(values) and max(ticks) >= max(values)


def test_given_a_spread_of_latencies_when_drawn_then_the_axis_is_not_pinned_to_zero() -> None:
    ticks = _y_ticks(_chart(["d1", "d2", "d3"], {"all": [180.0, 200.0, 190.0]}))
    assert min(ticks) > 100  # the variation between 180 and 200 ms stays visible
