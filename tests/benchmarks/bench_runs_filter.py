"""``runs_filter_100k_ms``: a label + score filter over 100,000 runs (target < 1,000).

The store (written once through a real ``ParquetSink`` and cached under the
temp dir, like ``bench_store_scale``) holds 100k short runs labelled with a
release (1.3/1.4), a user, an environment and a ``beta`` tag on every tenth; two
runs in 50 have ``helpful`` feedback chained after its end (0 or 1). The figure
is ``footprint runs --release 1.4 --score 'helpful<1' --tag beta`` in a
subprocess, start to exit, outlines cached (best of three);
``runs_filter_100k_cpu_ms`` its CPU time, ``runs_filter_100k_cold_ms`` the first
listing (outlines computed); ``runs_filter_100k_api_ms``/``_api_cpu_ms`` the same
query through ``recorder.list_runs`` in this process (no interpreter start).
Quick mode uses 10k runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from footprint.events import Event, FeedbackRecorded, LLMEnd, LLMStart, RunEnd, RunStart
from recorder import ParquetSink

_CACHE = Path(tempfile.gettempdir()) / "footprint-bench-runs-filter-v1"
_CLI = [sys.executable, "-m", "lens.cli"]
T0 = 1_767_225_600_000_000_000
FILTER = ["--release", "1.4", "--score", "helpful<1", "--tag", "beta"]


def _run(n: int) -> Iterator[Event]:
    run, ts = f"0190cccc-0000-7000-8000-{n:012d}", T0 + n * 10**9
    yield RunStart(run_id=run, seq=0, ts=ts, user_message=f"request {n}",
                   user_id=f"user-{n % 997}", session_id=f"s-{n // 5}",
                   tags=("beta",) if n % 10 == 5 else (), release="1.4" if n % 2 else "1.3",
                   environment="prod")
    yield LLMStart(run_id=run, seq=1, ts=ts + 1, iteration=1, step_id="llm#1",
                   provider="scripted", model="m", request_hash=f"{n:064x}")
    yield LLMEnd(run_id=run, seq=2, ts=ts + 2, iteration=1, step_id="llm#1", content="ok",
                 response_hash=f"{n:064x}", input_tokens=100, output_tokens=20, model="m")
    yield RunEnd(run_id=run, seq=3, ts=ts + 3, iteration=1, final_content=f"answer {n}")
    if n % 50 == 0 or n % 50 == 25:
        yield FeedbackRecorded(run_id=run, seq=4, ts=ts + 10**6, step_id="feedback#4",
                               name="helpful", value=float(n % 100 != 25), by="bench")


def write_labelled_runs(path: Path, runs: int, *, together: int = 500) -> None:
    sink = ParquetSink(path)
    try:
        for first in range(0, runs, together):
            sink.export([e for n in range(first, min(runs, first + together))
                         for e in _run(n)])
    finally:
        sink.shutdown()


def expected(runs: int) -> int:
    """How many runs the filter lists: release 1.4, tagged beta, latest helpful < 1."""
    return sum(1 for n in range(runs) if n % 2 and n % 10 == 5 and n % 50 in (0, 25)
               and n % 100 == 25)


def _cached(runs: int) -> Path:
    final = _CACHE / f"runs-{runs}"
    if not final.is_dir():
        tmp = _CACHE / f".runs-{runs}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        write_labelled_runs(tmp, runs)
        os.replace(tmp, final)
    return final


def _timed(store: Path) -> tuple[float, float, str]:
    usage = os.times()
    started = time.perf_counter()
    done = subprocess.run([*_CLI, "runs", *FILTER, "--limit", "5000", "--store", str(store)],
                          capture_output=True, text=True, timeout=1800, check=False)
    took = time.perf_counter() - started
    after = os.times()
    assert done.returncode == 0, done.stderr[-500:]
    cpu = (after.children_user - usage.children_user) + (after.children_system
                                                         - usage.children_system)
    return took, cpu, done.stdout


def _api_ms(store: Path, runs: int) -> tuple[float, float]:
    """``list_runs(store, where=…)`` in this process, best of five: wall and CPU ms."""
    from recorder import RunQuery, list_runs, open_store

    query = RunQuery(release="1.4", scores=("helpful<1",), tags=("beta",), limit=5000)
    best = (float("inf"), float("inf"))
    with open_store(store) as opened:
        for _ in range(5):
            wall, cpu = time.perf_counter(), time.process_time()
            found = list_runs(opened, query).num_rows
            best = min(best, ((time.perf_counter() - wall) * 1e3,
                              (time.process_time() - cpu) * 1e3))
            assert found == expected(runs), found
    return round(best[0], 1), round(best[1], 1)


def figures(quick: bool) -> dict[str, float]:
    runs = 10_000 if quick else 100_000
    _CACHE.mkdir(parents=True, exist_ok=True)
    store = _cached(runs)
    cold_copy = Path(tempfile.mkdtemp()) / "runs"
    shutil.copytree(store, cold_copy, ignore=shutil.ignore_patterns("summaries"))
    cold, _, _ = _timed(cold_copy)
    shutil.rmtree(cold_copy.parent, ignore_errors=True)
    _timed(store)  # outlines cached
    best = min((_timed(store) for _ in range(3)), key=lambda t: t[0])
    listed = [line for line in best[2].splitlines()[2:] if line.startswith("0190cccc")]
    assert len(listed) == expected(runs), (len(listed), expected(runs))
    api, api_cpu = _api_ms(store, runs)
    return {
        "runs_filter_runs": float(runs),
        "runs_filter_100k_api_ms": api,
        "runs_filter_100k_api_cpu_ms": api_cpu,
        "runs_filter_100k_ms": round(best[0] * 1e3, 1),
        "runs_filter_100k_cpu_ms": round(best[1] * 1e3, 1),
        "runs_filter_100k_cold_ms": round(cold * 1e3, 1),
    }


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
