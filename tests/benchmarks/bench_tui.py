"""Lens TUI figures on one long realistic run: 1,000,000 events (100,000 in quick mode).

The run is the support desk's loop repeated turn after turn (~24 events per
iteration, ~41k iterations at a million), written once through
``ParquetSink`` and cached in the temp directory. Every figure is measured
headless (``run_test``, 120×40) in a fresh subprocess, so imports and memory
are those of a real ``footprint lens``:

``tui_first_paint_1m_ms``: from building ``LensApp(store, run)`` (opening the
store included) to the timeline painted with its strip and iteration 1.
``tui_decisions_first_paint_1m_ms``: the same for ``view="decisions"``: the
index read and the first screen of rows painted. ``tui_key_1m_ms``: median
over next iteration, previous iteration, a page down in the decisions and
opening the decisions, each from the key press until the new content is
painted (keys ~0.15 s apart, as a person presses them; per-kind medians are
reported too, and ``tui_iteration_cold_1m_ms`` for an iteration read cold,
with no read-ahead). ``tui_filter_key_1m_ms``: median per keystroke typing
``skill.rej`` into the decisions filter, until the filtered rows are painted.
``tui_skills_open_1m_ms``: ``s`` until the walk's first screen is painted.
Each key figure runs from the key press until the content is there and the
screen has refreshed after it, polled while the Pilot delivers the key: the
Pilot's wait for an idle process after each key (20 ms sleeps until the CPU is
quiet, ~80 ms per key when a worker thread ran) is not the lens's latency.
The ``_cpu_`` variants are the process's CPU time over the same span (all
threads, DuckDB's included): on a shared, loaded machine they show what the
lens itself spends, where wall time also counts waiting for a core.
``tui_quit_during_load_1m_ms``: ``q`` pressed while the decisions index is
being read, until the app has exited. ``tui_peak_rss_1m_mb``: the
subprocess's peak resident memory after all of the above.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STORE_VERSION = "v1"


def peak_rss_mb() -> float:
    """This process's own peak resident memory, in MB.

    ``VmHWM`` of ``/proc/self/status`` on Linux: ``ru_maxrss`` is carried over
    ``exec`` from the process that spawned us (a big benchmark parent made
    every child read as big as itself); elsewhere ``ru_maxrss``.
    """
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return round(kb / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)
    hwm = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return round(int(hwm.split()[1]) / 1024, 1)


def _store(count: int) -> tuple[Path, str]:
    """The cached store of one ``count``-event run (built once per machine)."""
    sys.path.insert(0, str(HERE.parent / "tui"))
    from tui_support import BIG_RUN, write_long_run

    path = Path(tempfile.gettempdir()) / f"footprint-bench-tui-{count}-{STORE_VERSION}"
    if (path / ".complete").exists():
        return path / "store", BIG_RUN
    shutil.rmtree(path, ignore_errors=True)
    started = time.perf_counter()
    write_long_run(path / "store", count)
    (path / ".complete").write_text("ok")
    print(f"[bench_tui] wrote {count:,} events in {time.perf_counter() - started:.1f}s "
          f"to {path}", file=sys.stderr)
    return path / "store", BIG_RUN


def figures(quick: bool) -> dict[str, float]:
    count = 100_000 if quick else 1_000_000
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    from _child import child_figures, sized

    path, run_id = _store(count)
    found = child_figures(__file__, str(path), run_id, what="TUI")
    return {"tui_events": float(count), **sized(found, "100k" if quick else "1m")}


# ── the child: one fresh process, every figure ─────────────────────────────


async def _until(check: Callable[[], bool], pilot: Any, limit: float = 120.0) -> float:
    """Poll ``check`` on the event loop; then let the screen repaint; the time it took."""
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > limit:
            raise TimeoutError("the lens did not get there in time")
        await asyncio.sleep(0.002)
    await pilot.pause()
    return time.perf_counter() - started


async def _keyed(app: Any, pilot: Any, key: str, check: Callable[[], bool],
                 limit: float = 120.0) -> float:
    """Seconds from pressing ``key`` until ``check`` holds and the screen has refreshed
    after it (``call_after_refresh``): what a person waits for. ``check`` is polled while
    the press is delivered, so the Pilot's own idle detection after a key (it sleeps in
    20 ms steps until the process's CPU is quiet, ~80 ms per key when a thread worker ran)
    is not counted."""
    from textual.css.query import NoMatches

    def ready() -> bool:
        try:
            return check()
        except NoMatches:  # a screen pushed but not composed yet
            return False

    started = time.perf_counter()
    press = asyncio.ensure_future(pilot.press(key))
    while not ready():
        if time.perf_counter() - started > limit:
            press.cancel()
            raise TimeoutError(f"the lens did not get there in time after {key!r}")
        await asyncio.sleep(0.001)
    painted: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: painted.done() or painted.set_result(time.perf_counter()))
    took = await painted - started
    await press
    await pilot.pause()
    return took


def _ms(seconds: float) -> float:
    return round(seconds * 1e3, 1)


def _rows_painted(screen: Any) -> bool:
    from lens.tui._eventlist import EventLines

    lines = screen.query_one(EventLines)
    if lines.loading or lines.count != len(lines.rows):
        return False
    first, last = lines.visible_range()
    return all(lines.rows.parts(i) is not None for i in range(first, min(last, lines.count)))


def _strip_painted(screen: Any, index: int) -> bool:
    from lens.tui._timeline import IterationStrip

    strip = screen.query_one(IterationStrip)
    if strip.loading or not strip.count:
        return False
    shown = screen.shown
    first, last = strip.visible_range()
    heads = all(strip.outline.numbers[i] in strip.heads for i in range(first, last))
    return heads and shown is not None and shown.number == strip.outline.numbers[index]


async def _timeline(path: str, run_id: str, res: dict[str, float]) -> None:
    from lens.tui import LensApp
    from lens.tui._decisions import DecisionsScreen
    from lens.tui._eventlist import EventLines
    from lens.tui._timeline import TimelineScreen

    started, cpu = time.perf_counter(), time.process_time()
    app = LensApp(path, run=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(lambda: isinstance(app.screen, TimelineScreen)
                     and _strip_painted(app.screen, 0), pilot)
        res["tui_first_paint_N_ms"] = _ms(time.perf_counter() - started)
        res["tui_first_paint_cpu_N_ms"] = _ms(time.process_time() - cpu)
        screen = app.screen
        keys: dict[str, list[float]] = {"next": [], "prev": [], "scroll": [], "open": []}
        for kind, key, step in [("next", "right", 1)] * 12 + [("prev", "left", -1)] * 12:
            await asyncio.sleep(0.15)
            target = screen.index + step
            keys[kind].append(await _keyed(app, pilot, key,
                                           lambda t=target: _strip_painted(screen, t)))
        cold = await _keyed(app, pilot, "G",
                            lambda: _strip_painted(screen, len(screen.outline) - 1))
        res["tui_iteration_cold_N_ms"] = _ms(cold)
        for _ in range(3):
            await asyncio.sleep(0.15)
            keys["open"].append(await _keyed(
                app, pilot, "d",
                lambda: isinstance(app.screen, DecisionsScreen) and _rows_painted(app.screen)))
            for _ in range(4):
                await asyncio.sleep(0.15)
                at = app.screen.query_one(EventLines).cursor
                keys["scroll"].append(await _keyed(
                    app, pilot, "pagedown",
                    lambda c=at: app.screen.query_one(EventLines).cursor > c
                    and _rows_painted(app.screen)))
            await pilot.press("t")
            await _until(lambda: isinstance(app.screen, TimelineScreen), pilot)
        every = [t for ts in keys.values() for t in ts]
        res["tui_key_N_ms"] = _ms(statistics.median(every))
        for kind, ts in keys.items():
            res[f"tui_key_{kind}_N_ms"] = _ms(statistics.median(ts))
        await _skills(app, pilot, res)


async def _skills(app: Any, pilot: Any, res: dict[str, float]) -> None:
    from lens.tui._skills import SkillLines, SkillsScreen

    def painted() -> bool:
        if not isinstance(app.screen, SkillsScreen):
            return False
        lines = app.screen.query_one(SkillLines)
        first, last = lines.visible_range()
        return not lines.loading and lines.count > 0 and all(
            lines.lines_at(i) is not None for i in range(first, last))

    await asyncio.sleep(0.15)
    res["tui_skills_open_N_ms"] = _ms(await _keyed(app, pilot, "s", painted))


async def _decisions(path: str, run_id: str, res: dict[str, float]) -> None:
    from textual.widgets import Input

    from lens.tui import LensApp
    from lens.tui._decisions import DecisionsScreen

    started, cpu = time.perf_counter(), time.process_time()
    app = LensApp(path, run=run_id, view="decisions")
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(lambda: isinstance(app.screen, DecisionsScreen)
                     and _rows_painted(app.screen), pilot)
        res["tui_decisions_first_paint_N_ms"] = _ms(time.perf_counter() - started)
        res["tui_decisions_first_paint_cpu_N_ms"] = _ms(time.process_time() - cpu)
        screen = app.screen
        await pilot.press("slash")
        typed: list[float] = []
        typed_cpu: list[float] = []
        box = screen.query_one(Input)
        for key in "skill.rej":
            await asyncio.sleep(0.15)
            want = box.value + key
            c0 = time.process_time()
            typed.append(await _keyed(app, pilot, key,
                                      lambda w=want: box.value == w
                                      and screen.rows.prefixes == (w,)
                                      and _rows_painted(screen)))
            typed_cpu.append(time.process_time() - c0)
        res["tui_filter_key_N_ms"] = _ms(statistics.median(typed))
        res["tui_filter_key_cpu_N_ms"] = _ms(statistics.median(typed_cpu))


async def _quit(path: str, run_id: str, res: dict[str, float]) -> None:
    from lens.tui import LensApp

    app = LensApp(path, run=run_id, view="decisions")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        t0 = time.perf_counter()
        await pilot.press("q")
    res["tui_quit_during_load_N_ms"] = _ms(time.perf_counter() - t0)


def _child(path: str, run_id: str) -> None:
    res: dict[str, float] = {}
    asyncio.run(_timeline(path, run_id, res))
    asyncio.run(_decisions(path, run_id, res))
    asyncio.run(_quit(path, run_id, res))
    res["tui_peak_rss_N_mb"] = peak_rss_mb()
    print(json.dumps(res))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
        from lens.cli._main import _tune_process

        _tune_process()  # what the footprint executable does before `lens` runs
        _child(sys.argv[2], sys.argv[3])
    else:
        print(figures(quick="--quick" in sys.argv))
