"""`--remap` never stores a run twice: after a compaction merged the mapping's files with
others (under an id the remap cannot drop) those runs stay as stored and the remap skips
their traces, maps the rest again, and every run verifies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from otlp_build import agent_trace, trace_request

from recorder import open_store, verify_run
from recorder.ingest import Intake, remap
from recorder.ingest._intake import KEPT
from recorder.write._compact import compact

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _state(store: Path) -> tuple[int, int, int, int, int]:
    """(events, distinct (run, seq), runs, traces, runs that do not verify)."""
    with open_store(store) as s:
        events, distinct, runs = s.rows("SELECT count(*), count(DISTINCT (run_id, seq)), "
                                        "count(DISTINCT run_id) FROM events")[0]
        (traces,) = s.rows("SELECT count(DISTINCT foreign_trace_id) FROM run_sources")[0]
        ids = [str(r) for (r,) in s.rows("SELECT run_id FROM runs")]
        invalid = sum(not verify_run(s, r).valid for r in ids)
    return int(events), int(distinct), int(runs), int(traces), invalid


def _take(store: Path, first: int, n: int) -> None:
    with Intake(store) as intake:
        for k in range(first, first + n):
            intake.take(trace_request(agent_trace(k)).SerializeToString(), signal="traces",
                        fmt="pb")


def test_given_a_compaction_merged_some_mapped_files_when_remapped_then_each_run_is_stored_once(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    _take(store, 1, 2)  # two intakes: two writers, small files a compaction merges
    _take(store, 3, 2)
    assert compact(store), "nothing was compacted"
    _take(store, 5, 3)  # a mapping after the compaction: its files are dropped and remapped
    before = _state(store)
    assert before == (before[0], before[0], 7, 7, 0)
    gone, report = remap(store)
    assert gone > 0
    assert report.problems.get(KEPT, 0) > 0 and len(report.runs) == 3, report
    assert _state(store) == before


def _receive(store: Path, first: int, n: int) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", str(store)], stdout=subprocess.PIPE, text=True,
                            env=ENV, cwd=ROOT)
    assert proc.stdout is not None
    endpoint = next(line.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
                    for line in proc.stdout if "OTEL_EXPORTER_OTLP_ENDPOINT=" in line)
    with httpx.Client(timeout=30) as client:
        for k in range(first, first + n, 4):
            body = trace_request([s for t in range(k, k + 4) for s in agent_trace(t)])
            answer = client.post(endpoint + "/v1/traces", content=body.SerializeToString(),
                                 headers={"Content-Type": "application/x-protobuf"})
            assert answer.status_code == 200
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    proc.stdout.close()


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *argv], capture_output=True,
                          text=True, timeout=300, env=ENV, cwd=ROOT)


def test_given_received_runs_compacted_when_ingest_remap_then_counts_equal_and_every_run_verifies(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    _receive(store, 1, 40)
    _receive(store, 41, 40)
    done = _cli("compact", "--store", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    _receive(store, 81, 40)  # not compacted: dropped and mapped again
    before = _state(store)
    assert before == (before[0], before[0], 120, 120, 0)
    again = _cli("ingest", "--remap", "--store", str(store))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "compaction merged" in again.stdout, again.stdout
    assert _state(store) == before
