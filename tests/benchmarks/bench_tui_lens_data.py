"""Lens sessions, experiments and label columns at store scale: 10,000 runs (1,000 quick).

The store is ``store_scale.write_many_runs(..., labelled=True)`` (users, sessions of
five runs, tags, releases, a ``helpful`` score on every other complete run; cached
in the temp directory), plus a dataset of 1,000 items (100 quick) and two
experiments over it whose results point at the store's runs (B fails one item in
twenty that A passes; B's agent cannot be rebuilt, so each regression is
explained as far as the store allows: its first divergence, the cause unknown).
Measured headless (``run_test``, 120×40) in a fresh subprocess:

``tui_labels_N_first_paint_ms``: ``LensApp(store)`` to the runs screen painted
(the label and score columns read with every row). ``tui_sessions_N_show_ms``:
``S`` until the sessions list is painted; ``tui_session_N_open_ms``: ``enter`` on
one until its runs are painted. ``tui_experiments_N_show_ms``: ``E`` until the
experiments list is painted; ``tui_compare_N_show_ms``: ``c`` until the paired
items are painted; ``tui_compare_N_explained_ms``: until every regression is
explained. ``tui_sessions_N_key_ms``: median of ``pagedown`` presses on the
sessions list until repainted (the UI stays responsive).
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


def _scale() -> Any:
    spec = importlib.util.spec_from_file_location("_bench_store_scale",
                                                  HERE / "bench_store_scale.py")
    assert spec is not None and spec.loader is not None
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    return scale


def _experiments(path: Path, runs: int, items: int) -> None:
    """A dataset of ``items`` items and experiments ``a`` and ``b`` over it."""
    from store_scale import run_id_of

    from recorder._datasets import DatasetItem, add_items, load_dataset
    from recorder._experiments import ExperimentMeta, ExperimentResult, save_experiment

    add_items(path, "bench", [DatasetItem(item_id=f"it-{i}", message=f"request {i}",
                                          expected="APPROVED") for i in range(items)])
    data = load_dataset(path, "bench")
    for k, name in enumerate(("a", "b")):
        results = [ExperimentResult(
            item_id=item.item_id, repeat=0, run_id=run_id_of((i + k * items) % runs),
            answer="APPROVED" if k == 0 or i % 20 else "no", verdict="expected",
            passed=k == 0 or bool(i % 20), cost_usd=0.001, latency_ms=50.0 + k)
            for i, item in enumerate(data.items)]
        save_experiment(path, ExperimentMeta(name=name, dataset="bench", version=data.version,
                                             agent="missing_agent.py:make", comparator="item"),
                        results)


def _store(count: int) -> Path:
    scale = _scale()
    from store_scale import write_many_runs

    def make(p: Path) -> None:
        write_many_runs(p, count, labelled=True)
        _experiments(p, count, count // 10)

    scale._CACHE.mkdir(parents=True, exist_ok=True)
    path: Path = scale._cached(f"labelled-{count}", make)
    return path


def figures(quick: bool) -> dict[str, float]:
    count = 1_000 if quick else 10_000
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    from _child import child_figures, sized

    path = _store(count)
    found = child_figures(__file__, str(path), what="lens-data")
    return sized(found, "1k" if quick else "10k")


# ── the child: one fresh process ────────────────────────────────────────────


def _painted(app: Any, kind: type) -> bool:
    from lens.tui._lines import VirtualList

    if not isinstance(app.screen, kind):
        return False
    lines = app.screen.query_one(VirtualList)
    return not lines.loading and lines.count > 0


async def _timed(pilot: Any, key: str, done: Any, res: dict[str, float], name: str) -> None:
    """``key`` until ``done`` holds and the screen repainted (``bench_tui._keyed``: the
    Pilot's own idle wait after a key is not counted)."""
    from bench_tui import _keyed, _ms

    res[name] = _ms(await _keyed(pilot.app, pilot, key, done))


async def _child(path: str, res: dict[str, float]) -> None:
    from bench_tui import _keyed, _ms, _until

    from lens.tui import LensApp
    from lens.tui._compare import CompareScreen
    from lens.tui._experiments import ExperimentsScreen
    from lens.tui._runs import RunsScreen
    from lens.tui._sessions import SessionScreen, SessionsScreen
    from lens.tui._table import TableLines

    started = time.perf_counter()
    app = LensApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(lambda: _painted(app, RunsScreen), pilot)
        res["tui_labels_N_first_paint_ms"] = _ms(time.perf_counter() - started)
        await _timed(pilot, "S", lambda: _painted(app, SessionsScreen), res,
                     "tui_sessions_N_show_ms")
        table = app.screen.query_one(TableLines)
        keys = []
        for _ in range(6):
            before = table.cursor
            keys.append(await _keyed(app, pilot, "pagedown",
                                     lambda b=before: table.cursor != b))  # type: ignore[misc]
        res["tui_sessions_N_key_ms"] = _ms(statistics.median(keys))
        await _timed(pilot, "enter", lambda: _painted(app, SessionScreen), res,
                     "tui_session_N_open_ms")
        await pilot.press("r")
        await _timed(pilot, "E", lambda: _painted(app, ExperimentsScreen), res,
                     "tui_experiments_N_show_ms")
        await pilot.press("b", "down")
        t0 = time.perf_counter()
        await _timed(pilot, "c", lambda: _painted(app, CompareScreen), res,
                     "tui_compare_N_show_ms")
        await _until(lambda: not app.screen.explaining, pilot)
        res["tui_compare_N_explained_ms"] = _ms(time.perf_counter() - t0)
        explained = app.screen.comparison
        res["tui_compare_N_regressions"] = float(explained.count("regressed"))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        sys.path.insert(0, str(HERE))
        sys.path.insert(0, str(HERE.parent))
        os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
        found: dict[str, float] = {}
        asyncio.run(_child(sys.argv[2], found))
        print(json.dumps(found))
    else:
        print(figures(quick="--quick" in sys.argv))
