"""Recorder figures: engine-thread cost, sustained throughput, bytes on disk, SQL at scale.

Targets: ``emit_us_per_event`` <= 2 µs (median, Parquet sink on);
``throughput_events_per_s`` >= 300k (500k events, 300k in quick mode: fewer would
measure the start-up and the final seal rather than the sustained rate); ``bytes_per_event`` <= 40;
``convert_us_per_event`` is the writer's own CPU per event (events -> checked
Arrow batches, ``RowBuilder.take`` alone, no files): the part of the
throughput that holds the GIL, so 1e6 / it bounds ``throughput_events_per_s``
(the SHA-256 heads, Parquet and IPC run on the file thread, mostly GIL-free);
``sql_10m_refusals_ms`` and ``sql_10m_skill_switches_ms`` < 1,000 ms over a
generated 10M-event, 1,000-run store (1M in quick mode), written straight
into the store layout with pyarrow and cached under the temp dir;
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
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    LLMEnd,
    LLMStart,
    SkillActivated,
    SkillRejected,
    ToolEnd,
    ToolStart,
)
from recorder import EVENT_SCHEMA, ParquetSink, Recorder, open_store
from recorder.write._chain import CHAIN_FORMAT
from recorder.write._segment import parquet_options

_T0 = 1_700_000_000_000_000_000
_LAYOUT = CHAIN_FORMAT.replace("/", "")  # the cached big store is rebuilt when the layout changes
REFUSALS_SQL = (
    "SELECT run_id, count(*) AS refusals FROM rejections GROUP BY run_id "
    "ORDER BY refusals DESC LIMIT 10"
)
SWITCHES_SQL = (
    "SELECT run_id, count(*) AS switches FROM events WHERE type = 'context.evaluated' "
    "AND from_skill IS DISTINCT FROM to_skill GROUP BY run_id ORDER BY switches DESC LIMIT 10"
)


def _event(run: str, seq: int) -> Event:
    """A decision-heavy mix, the shape a real run records."""
    ts, it = _T0 + seq * 1000, seq // 8
    match seq % 8:
        case 0:
            move = CursorMove(by="route", from_skill=f"s{it % 3}", to=f"s{(it + 1) % 3}")
            return ContextEvaluated(run_id=run, seq=seq, ts=ts, iteration=it, active_count=3,
                                    skipped_count=1, evaluated_total=4, cursor_move=move,
                                    active_ids=("base", "fact-1", f"s{it % 3}"))
        case 1 | 2:
            return ContextInjected(run_id=run, seq=seq, ts=ts, iteration=it,
                                   slot="system-prompt", source="fact",
                                   content_hash=f"{seq % 5:064x}", content_summary="a policy",
                                   reason="fact 'fact-1' active", admitted_via="always",
                                   injection_id=f"fact-{seq % 5}", admitted_by=seq - 1)
        case 3:
            return LLMStart(run_id=run, seq=seq, ts=ts, iteration=it, provider="scripted",
                            model="tiny-1", request_hash=f"{it:064x}", messages_count=it,
                            step_id=f"llm#{it}")
        case 4:
            return LLMEnd(run_id=run, seq=seq, ts=ts, iteration=it, content="calling lookup",
                          response_hash=f"{it:063x}f", input_tokens=900, output_tokens=40,
                          step_id=f"llm#{it}")
        case 5:
            return ToolStart(run_id=run, seq=seq, ts=ts, iteration=it, tool_name="lookup",
                             tool_call_id=f"c{it}", args={"order": it})
        case 6:
            return ToolEnd(run_id=run, seq=seq, ts=ts, iteration=it, tool_call_id=f"c{it}",
                           tool_name="lookup", result=f"order {it}: shipped")
        case _:
            if it % 4 == 0:
                return SkillRejected(run_id=run, seq=seq, ts=ts, iteration=it,
                                     requested_id="billing", reason="unreachable",
                                     allowed=("triage",), current_skill_id="triage")
            return SkillActivated(run_id=run, seq=seq, ts=ts, iteration=it, skill_id="triage",
                                  reason="route", evidence_seq=seq - 7)


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


def _template(rows: int) -> pa.Table:
    """One run's rows in the store schema, built through the real row builder."""
    from recorder.write._rows import RowBuilder

    builder = RowBuilder()
    builder.add_all(_event("template", s) for s in range(rows))
    batches, _ = builder.take()
    return pa.Table.from_batches(batches).combine_chunks()


def _generate(root: Path, runs: int, per_run: int) -> None:
    template = _template(per_run)
    day = root / "events" / "date=2023-11-14"
    day.mkdir(parents=True, exist_ok=True)
    for r in range(runs):
        table = template.set_column(
            template.schema.get_field_index("run_id"), "run_id",
            pa.array([f"gen-{r:05d}"] * per_run, pa.string()))
        table = table.set_column(table.schema.get_field_index("ts"), "ts",
                                 pc.add(table.column("ts"), r * 10**9))
        for column in ("prev_check", "row_check"):  # random like real CRC-32 checks
            checks = pa.Array.from_buffers(pa.uint32(), per_run,
                                           [None, pa.py_buffer(os.urandom(4 * per_run))])
            table = table.set_column(table.schema.get_field_index(column), column, checks)
        pq.write_table(table.cast(EVENT_SCHEMA), day / f"gen-{r:05d}.parquet",
                       **parquet_options(EVENT_SCHEMA))  # as the writer seals them


def _big_store(total: int) -> Path:
    root = Path(tempfile.gettempdir()) / f"footprint-bench-store-{_LAYOUT}-{total}"
    done = root / ".complete"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        started = time.perf_counter()
        _generate(root, 1000, total // 1000)
        done.write_text("ok")
        print(f"[bench_recorder] generated {total:,} events in "
              f"{time.perf_counter() - started:.1f}s at {root}", file=sys.stderr)
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
