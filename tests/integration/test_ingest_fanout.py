"""More than one machine, as far as it can be tested here: N ``footprint receive``
processes (each its own store, as on its own machine) behind trace-id routing — the real
OpenTelemetry SDK exporting through one stock OTLP/gRPC exporter per receiver, each trace
to the receiver its id picks (what the Collector's load-balancing exporter with
``routing_key: traceID`` and its OTLP/gRPC protocol does) — then every store queried
together with DuckDB: every trace is one run, stored by exactly one receiver, whole, even
when its spans left the app in different exports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import duckdb
from fanout_support import routed_runs

ROOT = Path(__file__).resolve().parents[2]
RECEIVERS, TRACES = 3, 30


def _receiver(store: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--grpc-port", "0", "--store", str(store)],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.split("OTLP/gRPC on ")[1].split(")")[0]


def test_given_receivers_behind_trace_id_routing_when_the_sdk_exports_then_each_trace_is_one_whole_run_in_one_store(  # noqa: E501
        tmp_path: Path) -> None:
    stores = [tmp_path / f"store-{k}" for k in range(RECEIVERS)]
    receivers = [_receiver(store) for store in stores]
    ids = routed_runs([target for _, target in receivers], TRACES)
    for proc, _ in receivers:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
    files = [str(store / "events" / "**" / "*.parquet") for store in stores]
    rows = duckdb.sql(
        "SELECT filename, run_id, count(*) AS events, "
        "count(*) FILTER (WHERE type = 'llm.end') AS answers "
        f"FROM read_parquet({files!r}, filename = true, union_by_name = true) "
        "GROUP BY filename, run_id").fetchall()
    where = defaultdict(set)
    for filename, run_id, _, answers in rows:
        assert answers == 2, (run_id, answers)  # whole: both chat calls of the trace
        where[run_id].add(next(k for k, s in enumerate(stores) if str(s) in filename))
    assert len(where) == len(ids) == TRACES
    assert all(len(found) == 1 for found in where.values())  # one store each, never two
    assert {k for found in where.values() for k in found} == set(range(RECEIVERS))
