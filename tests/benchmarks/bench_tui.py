"""Lens TUI figures over one long run (100k events; 20k in quick mode).

``tui_rows_load_ms``: the decisions view's one SQL fetch of hot columns;
``tui_decisions_first_paint_ms``: from ``run_test`` entry to the decisions
screen painted (headless, includes opening the store);
``tui_filter_ms``: one type-prefix filter over every row;
``tui_render_line_us``: one visible line formatted into a Strip;
``tui_timeline_build_ms``: typed events read back and shaped for the timeline.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tui"))

from tui_support import write_big_run  # noqa: E402

from lens.tui import LensApp  # noqa: E402
from lens.tui._eventlist import EventLines  # noqa: E402
from lens.tui._model import build_run  # noqa: E402
from lens.tui._rows import EventRows  # noqa: E402
from recorder import open_store  # noqa: E402


async def _first_paint(path: Path, run_id: str) -> tuple[float, float]:
    started = time.perf_counter()
    app = LensApp(path, run=run_id, view="decisions")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        painted = time.perf_counter() - started
        lines = app.screen.query_one(EventLines)
        begin = time.perf_counter()
        for y in range(200):
            lines.render_line(y % 30)
        per_line = (time.perf_counter() - begin) / 200
    return painted, per_line


def figures(quick: bool) -> dict[str, float]:
    count = 20_000 if quick else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store"
        run_id = write_big_run(path, count)
        with open_store(path) as store:
            loads = []
            for _ in range(3):
                t = time.perf_counter()
                rows = EventRows.load(store, run_id)
                loads.append(time.perf_counter() - t)
            t = time.perf_counter()
            rows.filter("skill. tool.end")
            filtered = time.perf_counter() - t
            t = time.perf_counter()
            build_run(run_id, store.events(run_id))
            timeline = time.perf_counter() - t
        painted, per_line = asyncio.run(_first_paint(path, run_id))
    return {
        "tui_events": float(count),
        "tui_rows_load_ms": round(statistics.median(loads) * 1e3, 1),
        "tui_filter_ms": round(filtered * 1e3, 1),
        "tui_decisions_first_paint_ms": round(painted * 1e3, 1),
        "tui_render_line_us": round(per_line * 1e6, 1),
        "tui_timeline_build_ms": round(timeline * 1e3, 1),
    }


if __name__ == "__main__":
    print(figures(quick=False))
