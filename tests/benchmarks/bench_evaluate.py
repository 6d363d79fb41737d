"""Evaluation: ``footprint evaluate`` over 1,000 recorded runs with a trivial judge.

``evaluate_1k_runs_s``: the command (in process, store opened to every score
written and its summary printed), ``--concurrency 8``, on a copy of a store of
1,000 recorded runs (12 events each) whose outlines are cached (the store was
listed once before, as ``footprint runs`` or the lens do): each run's chain
walked and verified, its score appended and chained, the score heads updated
(goal < 5 s). ``evaluate_1k_runs_cold_s``: the same on a copy that was never
read, so the figure includes outlining its files. Best of 3 (each on a fresh copy).
``evaluate_otel_span_us``: one OTel span's CPU µs (``bench_otel.span_us``),
measured in the same run, to read the figures against the machine's speed.
Quick mode: best of 1.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = 1000


def trivial(run: object) -> object:
    """The benchmark's judge: one score, no work."""
    from recorder import Score

    return Score(name="ok", value=1.0)


def _span_us() -> float:
    spec = importlib.util.spec_from_file_location("_bench_otel_for_evaluate",
                                                  HERE / "bench_otel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return float(module.span_us(True))


def _record(store: Path) -> None:
    from footprint import Agent, ScriptedModel
    from recorder import ParquetSink, Recorder

    with Recorder(sinks=[ParquetSink(store)]) as rec:
        for i in range(RUNS):
            Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec).run_sync("hi")


def _listed(store: Path) -> None:
    from recorder import RunQuery, list_runs, open_store

    with open_store(store) as opened:
        assert list_runs(opened, RunQuery(limit=RUNS)).num_rows == RUNS


def _run(template: Path, scratch: Path) -> float:
    from lens.cli import main as footprint

    store = scratch / "copy"
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(template, store)
    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # the runner's stdout is its figures
        code = footprint(["evaluate", "--judge", f"{__file__}:trivial", "--concurrency", "8",
                          "--store", str(store)])
    took = time.perf_counter() - started
    assert code == 0
    return took


def figures(quick: bool) -> dict[str, float]:
    repeats = 1 if quick else 3
    with tempfile.TemporaryDirectory() as scratch:
        cold, warm = Path(scratch) / "cold", Path(scratch) / "warm"
        _record(cold)
        shutil.copytree(cold, warm)
        _listed(warm)
        best = min(_run(warm, Path(scratch)) for _ in range(repeats))
        best_cold = min(_run(cold, Path(scratch)) for _ in range(repeats))
    return {"evaluate_1k_runs_s": round(best, 3), "evaluate_1k_runs_cold_s": round(best_cold, 3),
            "evaluate_otel_span_us": round(_span_us(), 2)}


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
