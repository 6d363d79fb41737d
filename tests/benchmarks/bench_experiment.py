"""Experiments: ``footprint experiment run`` over a 100-item dataset.

``experiment_100_items_s``: the command (in process, store open to results
saved) running 100 items with an agent whose ``FunctionModel`` sleeps 50 ms a
call (one call an item), ``--concurrency 8``: each run recorded into the store,
scored and stored (goal < 2 s; the model's sleeping alone is 100 x 50 ms / 8 =
0.63 s). Best of 3 (each a new experiment on the same dataset).
``experiment_otel_span_us``: one OTel span's CPU µs (``bench_otel.span_us``),
measured in the same run, to read the figure against the machine's speed.
Quick mode: best of 1.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from footprint import Agent, FunctionModel, StepClock
from footprint.events import EventSink
from footprint.providers import LLMRequest

HERE = Path(__file__).resolve().parent
ITEMS = 100
SLEEP_S = 0.05


def _slow(request: LLMRequest) -> str:
    time.sleep(SLEEP_S)
    return f"answered: {request.messages[-1].content}"


def make_agent(sink: EventSink | None = None) -> Agent:
    """The benchmark's candidate: one 50 ms model call a run."""
    return Agent(provider=FunctionModel(_slow), model="slow", sink=sink, clock=StepClock())


def _span_us() -> float:
    spec = importlib.util.spec_from_file_location("_bench_otel_for_experiment",
                                                  HERE / "bench_otel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return float(module.span_us(True))


def _dataset(store: Path) -> None:
    from recorder import ParquetSink, Recorder
    from recorder._datasets import DatasetItem, add_items

    recorder = Recorder(sinks=[ParquetSink(store)])  # makes the store
    recorder.close()
    add_items(store, "bench", [DatasetItem(item_id=f"item-{i}", message=f"question {i}",
                                           expected=f"question {i}") for i in range(ITEMS)])


def _run(store: Path, name: str) -> float:
    from lens.cli import main as footprint

    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # the runner's stdout is its figures
        code = footprint(["experiment", "run", "bench", "--agent", f"{__file__}:make_agent",
                          "--name", name, "--concurrency", "8", "--store", str(store)])
    took = time.perf_counter() - started
    assert code == 0
    return took


def figures(quick: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as scratch:
        store = Path(scratch) / "store"
        _dataset(store)
        best = min(_run(store, f"e{k}") for k in range(1 if quick else 3))
    return {"experiment_100_items_s": round(best, 3),
            "experiment_otel_span_us": round(_span_us(), 2)}


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
