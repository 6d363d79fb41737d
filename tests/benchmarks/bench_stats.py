"""Trends at scale: ``footprint stats`` over a 100,000-run store.

``stats_100k_ms``: the whole ``footprint stats --no-plot`` command, start to
exit, outlines cached (target < 1,000); ``stats_100k_cpu_ms`` its CPU time
(user + system), which a loaded machine does not inflate;
``stats_100k_query_ms``: the aggregate query alone, in process
(``recorder.store._trends.trends``, store open, best of 3);
``stats_100k_grouped_ms``: the command grouped by model, hourly;
``stats_group_by_100k_ms``: the slowest of the command grouped by model (each
call's own tokens and cost), user, tag and env (best of 2 each). The store is
``tests/store_scale.py``'s many-runs store (3 iterations a run, written through
a real ``ParquetSink``), cached under the temp dir. Quick mode: 10,000 runs.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from store_scale import write_many_runs  # noqa: E402

_CACHE = Path(tempfile.gettempdir()) / "footprint-bench-store-scale-v1"
_CLI = [sys.executable, "-m", "lens.cli", "stats", "--no-plot"]


def _store(runs: int) -> Path:
    final = _CACHE / f"many-{runs}"
    if not final.is_dir():
        tmp = _CACHE / f".many-{runs}.stats"
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        write_many_runs(tmp, runs)
        tmp.rename(final)
    return final


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(store: Path, *extra: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``footprint stats`` run."""
    started, cpu = time.perf_counter(), _cpu()
    done = subprocess.run([*_CLI, "--store", str(store), *extra], capture_output=True,
                          text=True, timeout=600, check=False)
    took = time.perf_counter() - started
    assert done.returncode == 0 and done.stdout, done.stderr[-500:]
    return took, _cpu() - cpu


def _query_s(store: Path) -> float:
    from recorder import open_store
    from recorder.store._trends import trends

    with open_store(store) as opened:
        trends(opened)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            table = trends(opened)
            best = min(best, time.perf_counter() - started)
        assert sum(table.column("runs").to_pylist()) > 0
    return best


def figures(quick: bool) -> dict[str, float]:
    runs = 10_000 if quick else 100_000
    _CACHE.mkdir(parents=True, exist_ok=True)
    store = _store(runs)
    _command(store)  # outlines computed and cached before the timed runs
    timed = [_command(store) for _ in range(3)]
    wall, cpu = min(timed)
    grouped = min(_command(store, "--group-by", "model", "--by", "hour")[0] for _ in range(2))
    by_group = max(min(_command(store, "--group-by", g)[0] for _ in range(2))
                   for g in ("model", "user", "tag", "env"))
    return {
        "stats_runs": float(runs),
        "stats_100k_ms": round(wall * 1e3, 1),
        "stats_100k_cpu_ms": round(cpu * 1e3, 1),
        "stats_100k_query_ms": round(_query_s(store) * 1e3, 1),
        "stats_100k_grouped_ms": round(grouped * 1e3, 1),
        "stats_group_by_100k_ms": round(by_group * 1e3, 1),
    }


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
