"""Compaction figures: verify one run among 1,200 sealed segments.

A store of 1,200 runs, each sealed in its own segment by one writer
(``seal_rows=1``), written twice and cached under the temp dir: once by a
default writer, which compacts as it goes (``ParquetSink(compact_at=64)``),
once with compaction off.

``verify_1200_segments_s``: the real ``footprint verify RUN`` (start to exit)
over the default writer's store (target < 1); ``*_cpu_s``: its CPU time,
which a loaded machine does not inflate; ``*_inproc_s``: ``open_store`` and
``verify_run`` in this process (no interpreter start, no imports). ``compact_1200_segments_s``:
``footprint compact`` over a copy of the uncompacted store, then
``verify_1200_compacted_s``: the same verify after it.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from store_scale import run_events, run_id_of  # noqa: E402

from recorder import ParquetSink, open_store, verify_run  # noqa: E402

_CACHE = Path(tempfile.gettempdir()) / "footprint-bench-compact-v1"
_CLI = [sys.executable, "-m", "lens.cli"]
SEGMENTS = 1_200


def _write(root: Path, *, compact_at: int | None) -> None:
    sink = ParquetSink(root, seal_rows=1, compact_at=compact_at)
    try:
        for n in range(SEGMENTS):
            sink.export(list(run_events(n, 2)))
    finally:
        sink.shutdown()


def _cached(name: str, make: Any) -> Path:
    final = _CACHE / name
    if not final.is_dir():
        tmp = _CACHE / f".{name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        make(tmp)
        os.replace(tmp, final)
    return final


def _timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one real ``footprint`` command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([*_CLI, *args], capture_output=True, text=True, timeout=1800,
                          check=False)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, f"{args}: {done.returncode} {done.stderr[-500:]}"
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def _in_process(root: Path, run: str) -> float:
    started = time.perf_counter()
    with open_store(root) as store:
        assert verify_run(store, run).valid
    return time.perf_counter() - started


def figures(quick: bool) -> dict[str, float]:
    _CACHE.mkdir(parents=True, exist_ok=True)
    auto = _cached("auto", lambda p: _write(p, compact_at=64))
    plain = _cached("plain", lambda p: _write(p, compact_at=None))
    run = run_id_of(SEGMENTS // 2)
    _timed(["runs", "--store", str(auto)])  # outlines cached, as after any first read
    repeats = 1 if quick else 3
    verify = min(_timed(["verify", run, "--store", str(auto)]) for _ in range(repeats))
    inproc = min(_in_process(auto, run) for _ in range(repeats))
    copy = Path(tempfile.mkdtemp()) / "store"
    try:
        shutil.copytree(plain, copy)
        compact_s, _ = _timed(["compact", "--store", str(copy)])
        compacted, _ = _timed(["verify", run, "--store", str(copy)])
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    return {
        "verify_1200_segments_s": round(verify[0], 3),
        "verify_1200_segments_cpu_s": round(verify[1], 3),
        "verify_1200_segments_inproc_s": round(inproc, 3),
        "compact_1200_segments_s": round(compact_s, 2),
        "verify_1200_compacted_s": round(compacted, 3),
    }


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
