"""Lens runs screen at store scale: 10,000 runs (1,000 in quick mode).

The store is the one ``bench_store_scale`` generates (cached in the temp
directory, shared with it). Measured headless (``run_test``, 120×40) in a
fresh subprocess, so imports are those of a real ``footprint lens``:

``tui_runs_10k_first_paint_ms``: from building ``LensApp(store)`` (opening the
store included) to the runs screen painted with its first screen of rows.
``tui_runs_10k_key_ms``: median of six pages away from where the list opened
and six back, each until repainted. ``tui_runs_10k_open_ms``: ``enter`` on a
run until its timeline is painted. The ``_cpu_`` variant is the process's CPU time over the first
paint. Target (issue 12): first paint < 1,000 ms.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _many_runs(count: int) -> Path:
    """The cached ``count``-run store of ``bench_store_scale``."""
    spec = importlib.util.spec_from_file_location("_bench_store_scale",
                                                  HERE / "bench_store_scale.py")
    assert spec is not None and spec.loader is not None
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    from store_scale import write_many_runs

    scale._CACHE.mkdir(parents=True, exist_ok=True)
    path: Path = scale._cached(f"many-{count}", lambda p: write_many_runs(p, count))
    return path


def figures(quick: bool) -> dict[str, float]:
    count = 1_000 if quick else 10_000
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    from _child import child_figures, sized

    path = _many_runs(count)
    found = child_figures(__file__, str(path), what="runs-screen")
    return sized(found, "1k" if quick else "10k")


# ── the child: one fresh process ────────────────────────────────────────────


def _runs_painted(app: Any, top: int | None = None) -> bool:
    from lens.tui._runs import RunLines, RunsScreen

    if not isinstance(app.screen, RunsScreen):
        return False
    lines = app.screen.query_one(RunLines)
    if lines.loading or not lines.count:
        return False
    first, _ = lines.visible_range()
    return top is None or first == top


async def _child(path: str, res: dict[str, float]) -> None:
    from lens.tui import LensApp
    from lens.tui._runs import RunLines
    from lens.tui._timeline import TimelineScreen

    started, cpu = time.perf_counter(), time.process_time()
    app = LensApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(lambda: _runs_painted(app), pilot)
        res["tui_runs_N_first_paint_ms"] = _ms(time.perf_counter() - started)
        res["tui_runs_N_first_paint_cpu_ms"] = _ms(time.process_time() - cpu)
        lines = app.screen.query_one(RunLines)
        keys: list[float] = []
        home = "pagedown" if lines.cursor < lines.count // 2 else "pageup"
        back = "pageup" if home == "pagedown" else "pagedown"
        for key in [home] * 6 + [back] * 6:  # away from where the list opened, and back
            await asyncio.sleep(0.1)
            before = lines.cursor
            await pilot.press(key)
            keys.append(await _until(lambda b=before: lines.cursor != b, pilot))
        res["tui_runs_N_key_ms"] = _ms(statistics.median(keys))
        t0 = time.perf_counter()
        await pilot.press("enter")
        await _until(lambda: isinstance(app.screen, TimelineScreen), pilot)
        res["tui_runs_N_open_ms"] = _ms(time.perf_counter() - t0)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        sys.path.insert(0, str(HERE))
        from bench_tui import _ms, _until
        os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
        found: dict[str, float] = {}
        asyncio.run(_child(sys.argv[2], found))
        print(json.dumps(found))
    else:
        print(figures(quick="--quick" in sys.argv))
