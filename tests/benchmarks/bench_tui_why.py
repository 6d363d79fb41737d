"""The lens's why screen while it runs a causal search in place.

``tui_key_during_why_ms`` (goal < 50): median milliseconds from a key press
on the why screen (``down``/``up`` in the suspect list, ~0.15 s apart, as a
person presses them) until the highlight has moved and the screen has
refreshed after it, counted only for presses made while the search
(``lens.explain`` ``why`` with the planted agent, on a thread worker, its
progress marshalled to the UI thread) is running; the search is started again
with ``a`` whenever it finishes, until 30 presses are measured (12 in quick
mode). ``tui_key_why_idle_ms`` is the same key with no search running (as
many presses, first). ``tui_key_during_why_max_ms`` is the slowest of them and
``tui_why_searches`` how many searches ran meanwhile. The store is
``examples/planted/long_run.py`` (31 model calls, 30 injections) recorded once
into a temp directory; the agent is that file's ``make_agent`` (a deterministic
model: the search is pure Python, so it contends with the UI thread for the
interpreter; it lasts seconds, long enough to press keys into — the one-call
``wrong_fact`` search ended before a key could be measured on a fast machine, and
the loop never finished). Fewer measured presses than searches × 10 stops the
figure with an error instead of looping. Measured
headless (``run_test``, 120×40) in a fresh subprocess, as ``bench_tui`` does.
Keys are delivered as the terminal driver delivers them (the Pilot's
``press`` waits for an idle process after each key, which never comes while
the search holds a core); each figure runs from the key until the highlight
moved and the screen has refreshed after it.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
AGENT = "examples/planted/long_run.py:make_agent"


def figures(quick: bool) -> dict[str, float]:
    presses = 12 if quick else 30
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    from _child import child_figures

    with tempfile.TemporaryDirectory(prefix="footprint-bench-tui-why-") as tmp:
        return child_figures(__file__, tmp, str(presses), what="why-screen")


# ── the child: one fresh process ────────────────────────────────────────────


def _send(app: Any, key: str) -> None:
    """Deliver ``key`` as the terminal driver does (the Pilot's ``press`` also waits for an
    idle process, which never comes while a search holds a core)."""
    from textual import events

    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app._driver.send_message(event)


async def _until(check: Callable[[], bool], limit: float = 60.0) -> None:
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > limit:
            raise TimeoutError("the lens did not get there in time")
        await asyncio.sleep(0.001)


async def _keyed(app: Any, key: str, check: Callable[[], bool]) -> float:
    """Seconds from sending ``key`` until ``check`` holds and the screen has refreshed."""
    started = time.perf_counter()
    _send(app, key)
    await _until(check)
    painted: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: painted.done() or painted.set_result(time.perf_counter()))
    return await painted - started


def _record(store: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from planted_support import record

    record("long_run", store)


async def _keys(store: Path, presses: int, res: dict[str, float]) -> None:
    from textual.widgets import OptionList

    from lens.tui import LensApp
    from lens.tui._why import WhyScreen

    app = LensApp(store, run="last", view="why", agent=AGENT)
    async with app.run_test(size=(120, 40)):
        await _until(lambda: isinstance(app.screen, WhyScreen) and app.screen.read is not None)
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        listing = screen.query_one("#pieces", OptionList)
        idle: list[float] = []
        for _ in range(presses):
            await asyncio.sleep(0.15)
            at = listing.highlighted or 0
            key, target = ("down", at + 1) if at + 1 < listing.option_count else ("up", at - 1)
            idle.append(await _keyed(app, key, lambda t=target: listing.highlighted == t))
        res["tui_key_why_idle_ms"] = round(statistics.median(idle) * 1e3, 1)
        took: list[float] = []
        searches = 0
        while len(took) < presses:
            if not screen.searching:
                if searches > 10 * (len(took) + 1):
                    raise RuntimeError(f"{searches} searches ended before a key could be "
                                       f"measured during one ({len(took)} measured): the "
                                       "benchmark needs a longer search")
                _send(app, "a")
                await _until(lambda: screen.searching)
                searches += 1
            await asyncio.sleep(0.15)
            at = listing.highlighted or 0
            key, target = ("down", at + 1) if at + 1 < listing.option_count else ("up", at - 1)
            running = screen.searching  # a search that ends repaints the list: not counted
            seconds = await _keyed(app, key, lambda t=target: listing.highlighted == t
                                   or not screen.searching)
            if running and screen.searching:
                took.append(seconds)
        await _until(lambda: not screen.searching)
        res["tui_key_during_why_ms"] = round(statistics.median(took) * 1e3, 1)
        res["tui_key_during_why_max_ms"] = round(max(took) * 1e3, 1)
        res["tui_why_searches"] = float(searches)


def _child(tmp: str, presses: int) -> None:
    store = Path(tmp) / "store"
    _record(store)
    res: dict[str, float] = {}
    started = time.perf_counter()
    asyncio.run(_keys(store, presses, res))
    print(f"[bench_tui_why] {time.perf_counter() - started:.1f}s", file=sys.stderr)
    print(json.dumps(res))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
        from lens.cli._main import _tune_process

        _tune_process()  # what the footprint executable does before `lens` runs
        _child(sys.argv[2], int(sys.argv[3]))
    else:
        print(figures(quick="--quick" in sys.argv))
