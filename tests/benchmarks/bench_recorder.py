"""Recorder figures: engine-thread cost, sustained throughput, bytes on disk, SQL at scale.

Targets: ``emit_us_per_event`` <= 2 µs (median, Parquet sink on);
``throughput_events_per_s`` >= 300k (500k events, 300k in quick mode: fewer would
measure the start-up and the final seal rather than the sustained rate); ``bytes_per_event`` <= 40;
``convert_us_per_event`` is the writer's own CPU per event (events -> checked
Arrow batches, ``RowBuilder.take`` alone, no files): the part of the
throughput that holds the GIL, so 1e6 / it bounds ``throughput_events_per_s``
(the SHA-256 heads, Parquet and IPC run on the file thread, mostly GIL-free);
``sql_10m_refusals_ms`` and ``sql_10m_skill_switches_ms`` < 1,000 ms over a
generated 10M-event, 1,000-run store (1M in quick mode), written through a
real ``ParquetSink`` (``tests/store_scale.py``), cached under the temp dir and
checked on every use: the benchmark raises if it opens with a ``StoreWarning``
or holds fewer events or runs than were written;
``sql_10m_sandboxed_refusals_ms`` is the same query through ``Store.sql`` (the
SQL sandbox: statement checks and a locked-down connection), also < 1,000 ms.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from store_scale import REFUSALS_SQL, SWITCHES_SQL, write_decision_runs
from store_scale import decision_event as _event

from recorder import ParquetSink, Recorder, StoreWarning, open_store
from recorder.write._chain import CHAIN_FORMAT

_LAYOUT = CHAIN_FORMAT.replace("/", "")  # the cached big store is rebuilt when the layout changes


def _warm_up(n: int) -> None:
    """One short recording first: the figure is the sustained rate, not the first run's
    page faults and one-time set-up (class plans, the framing plan, the allocators)."""
    root = Path(tempfile.mkdtemp(prefix="fp-bench-warm-"))
    try:
        with Recorder([ParquetSink(root)], capacity=n + 1) as rec:
            for i in range(n):
                rec.emit(_event(f"warm-{i // 10_000:04d}", i % 10_000))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _emit_and_throughput(n: int) -> tuple[float, float, float]:
    _warm_up(min(n, 200_000))
    events = [_event(f"bench-{i // 10_000:04d}", i % 10_000) for i in range(n)]
    root = Path(tempfile.mkdtemp(prefix="fp-bench-rec-"))
    try:
        rec = Recorder([ParquetSink(root)], capacity=n + 1)
        per_chunk: list[float] = []
        emit = rec.emit
        started = time.perf_counter()
        for lo in range(0, n, 1000):
            t = time.perf_counter_ns()
            for e in events[lo:lo + 1000]:
                emit(e)
            per_chunk.append((time.perf_counter_ns() - t) / 1000 / 1000)
        rec.close(timeout_s=600)
        took = time.perf_counter() - started
        assert rec.stats().overflow == 0
        size = sum(p.stat().st_size for p in root.rglob("*.parquet"))
        return statistics.median(per_chunk), n / took, size / n
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _convert_us(n: int) -> float:
    """CPU µs per event of ``RowBuilder.take`` on the benchmark mix, best of three passes."""
    from recorder.write._rows import RowBuilder

    events = [_event(f"conv-{i // 10_000:04d}", i % 10_000) for i in range(n)]
    passes = []
    for _ in range(3):
        builder = RowBuilder()
        started = time.thread_time()
        for lo in range(0, n, 8192):  # the recorder's batch size
            builder.add_all(events[lo:lo + 8192])
            builder.take()
        passes.append((time.thread_time() - started) / n * 1e6)
    return min(passes)


def _checked(root: Path, runs: int, total: int) -> None:
    """Raise unless the store at ``root`` opens without a warning and holds every
    generated event and run (an empty store would time nothing)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StoreWarning)
        store = open_store(root)
        [(events, seen)] = store.rows("SELECT count(*), count(DISTINCT run_id) FROM events")
    problems = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    problems += [f"skipped {path}" for path in store.files.skipped]
    if problems or events < total or seen < runs:
        raise RuntimeError(
            f"generated store {root} holds {events:,} events in {seen:,} runs "
            f"(wrote {total:,} in {runs:,}); warnings: {problems or 'none'}; "
            "delete it to regenerate, and fix the generator (tests/store_scale.py)")


def _big_store(total: int, runs: int = 1000) -> Path:
    """The generated store, cached under the temp dir (renamed into place when whole)
    and checked on every use."""
    root = Path(tempfile.gettempdir()) / f"footprint-bench-sink-store-{_LAYOUT}-{total}"
    if not root.is_dir():
        tmp = root.with_name(f".{root.name}.{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        started = time.perf_counter()
        write_decision_runs(tmp, runs, total // runs)
        os.replace(tmp, root)
        print(f"[bench_recorder] generated {total:,} events in "
              f"{time.perf_counter() - started:.1f}s at {root}", file=sys.stderr)
    _checked(root, runs, total)
    return root


def _query_ms(root: Path, sql: str, *, sandboxed: bool = False) -> float:
    """Median of three runs; ``sandboxed`` goes through ``Store.sql`` (the checked,
    locked-down connection ``footprint sql`` and the TUI console use)."""
    store = open_store(root)
    run = (lambda q: store.sql(q).fetchall()) if sandboxed else store.rows
    run(sql)  # warm the connection and the file metadata
    times = []
    for _ in range(3):
        t = time.perf_counter()
        run(sql)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def figures(quick: bool) -> dict[str, float]:
    emit_us, per_s, per_event = _emit_and_throughput(300_000 if quick else 500_000)
    root = _big_store(1_000_000 if quick else 10_000_000)
    return {
        "emit_us_per_event": round(emit_us, 3),
        "convert_us_per_event": round(_convert_us(50_000 if quick else 200_000), 2),
        "throughput_events_per_s": round(per_s),
        "bytes_per_event": round(per_event, 1),
        "sql_10m_refusals_ms": round(_query_ms(root, REFUSALS_SQL), 1),
        "sql_10m_skill_switches_ms": round(_query_ms(root, SWITCHES_SQL), 1),
        "sql_10m_sandboxed_refusals_ms": round(_query_ms(root, REFUSALS_SQL, sandboxed=True), 1),
    }


if __name__ == "__main__":
    print(figures("--quick" in sys.argv))
