"""Every command on runs mapped from foreign traces, as real ``footprint`` processes:
``ingest``, ``runs``, ``show``, ``sql``, ``diff``, ``verify``, ``export-otlp``, ``snapshot``,
``ingest --remap``, and ``receive`` until Ctrl-C (the lens: tests/tui/test_tui_ingested.py)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from otlp_build import agent_trace, to_json, trace_request
from otlp_receiver import HttpReceiver

from footprint.events import RunEnd, RunSource
from lens.playback._snapshot import Recording

ROOT = Path(__file__).resolve().parents[2]


def footprint(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "lens.cli", *argv], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ingested")
    lines = root / "traces.jsonl"
    lines.write_bytes(to_json(trace_request(agent_trace(21, calls=2))) + b"\n" + to_json(
        trace_request(agent_trace(22, calls=2, system="You are the desk. Be terse.",
                                  t0=1_780_000_100 * 10**9))) + b"\n")
    done = footprint("ingest", str(lines), "--store", str(root / "store"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ingested: 8 spans, 0 log records, 2 runs mapped")
    return root / "store"


def test_given_ingested_runs_when_listed_shown_and_queried_then_they_read_like_native_runs(
        store: Path) -> None:
    runs = footprint("runs", "--store", str(store))
    assert runs.returncode == 0 and runs.stdout.count("complete") == 2, runs.stdout
    show = footprint("show", "last", "--store", str(store))
    assert show.returncode == 0, show.stderr
    assert "source: mapped from a trace of test-scope (otel-genai, fidelity request-level)" in \
        show.stdout
    assert "not in the trace: why each piece was admitted" in show.stdout
    assert "[messages] tool-result 'tool#call_1' via delivered" in show.stdout
    assert "answer: APPROVED" in show.stdout
    sql = footprint("sql", "SELECT framework, fidelity FROM run_sources ORDER BY run_id",
                    "--store", str(store), "--format", "csv")
    assert sql.stdout.splitlines() == ["framework,fidelity", "test-scope,request-level",
                                       "test-scope,request-level"]
    calls = footprint("sql", "SELECT count(*) FROM llm_calls", "--store", str(store),
                      "--format", "csv")
    assert calls.stdout.splitlines()[1] == "4"


def test_given_two_ingested_runs_when_diffed_and_verified_then_both_commands_work(
        store: Path) -> None:
    ids = footprint("sql", "SELECT run_id FROM runs ORDER BY start_ns", "--store", str(store),
                    "--format", "csv").stdout.splitlines()[1:]
    diff = footprint("diff", ids[0], ids[1], "--store", str(store))
    assert diff.returncode in (0, 1), diff.stderr
    assert "system:" in diff.stdout, diff.stdout
    for run_id in ids:
        verify = footprint("verify", run_id, "--store", str(store))
        assert verify.returncode == 0 and f"{run_id}: valid, 22 records" in verify.stdout, \
            verify.stdout


def test_given_an_ingested_run_when_exported_to_otlp_then_a_receiver_gets_its_spans(
        store: Path) -> None:
    with HttpReceiver() as receiver:
        done = footprint("export-otlp", "last", "--store", str(store), "--endpoint",
                         receiver.endpoint)
        assert done.returncode == 0, done.stderr
        assert receiver.wait_for(lambda spans: any(s.name.startswith("chat") for s in spans))


def test_given_an_ingested_run_when_snapshot_without_agent_then_the_recording_loads(
        store: Path, tmp_path: Path) -> None:
    done = footprint("snapshot", "last", "-o", str(tmp_path), "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert "no test module without --agent" in done.stdout
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert not list(tmp_path.glob("test_*.py"))
    recording = Recording.load(folder)
    events = recording.events(recording.run)
    assert any(isinstance(e, RunSource) for e in events)
    assert next(e for e in events if isinstance(e, RunEnd)).final_content == "APPROVED"


def test_given_ingested_runs_when_remapped_then_the_same_runs_come_back(
        store: Path, tmp_path: Path) -> None:
    before = footprint("sql", "SELECT run_id, events FROM runs ORDER BY run_id", "--store",
                       str(store), "--format", "csv").stdout
    done = footprint("ingest", "--remap", "--store", str(store))
    assert done.returncode == 0 and "2 runs mapped" in done.stdout, done.stdout + done.stderr
    after = footprint("sql", "SELECT run_id, events FROM runs ORDER BY run_id", "--store",
                      str(store), "--format", "csv").stdout
    assert after == before


def test_given_the_receive_command_when_a_batch_arrives_and_ctrl_c_then_it_flushes_and_exits_130(
        tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "set OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:" in first, first
        endpoint = first.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
        spans = agent_trace(23)
        body = trace_request(spans[:-1]).SerializeToString()  # the root is still open
        answer = httpx.post(endpoint + "/v1/traces", content=body, timeout=10,
                            headers={"Content-Type": "application/x-protobuf"})
        assert answer.status_code == 200
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "stopped; 3 spans, 0 log records, 1 runs mapped" in out, out
    runs = footprint("sql", "SELECT status FROM runs", "--store", str(tmp_path), "--format", "csv")
    assert runs.stdout.splitlines() == ["status", "incomplete"]


def test_given_the_same_file_ingested_twice_when_verified_then_its_run_is_stored_once(
        tmp_path: Path) -> None:
    lines = tmp_path / "traces.jsonl"
    lines.write_bytes(to_json(trace_request(agent_trace(31, calls=2))) + b"\n")
    store = str(tmp_path / "store")
    first = footprint("ingest", str(lines), "--store", store)
    assert first.returncode == 0, first.stderr
    again = footprint("ingest", str(lines), "--store", store)
    assert "0 runs mapped" in again.stdout, again.stdout
    assert "4 spans of traces already in the store" in again.stderr, again.stderr
    count = footprint("sql", "SELECT count(*) AS n, count(DISTINCT seq) AS seqs FROM events",
                      "--store", store, "--format", "csv")
    assert count.stdout.splitlines()[1] == "22,22", count.stdout
    verify = footprint("verify", "last", "--store", store)
    assert verify.returncode == 0 and "valid, 22 records" in verify.stdout, verify.stdout
    for _ in range(2):  # the raw partition holds the batch twice: a remap keeps each span once
        remap = footprint("ingest", "--remap", "--store", store)
        assert "1 runs mapped" in remap.stdout, remap.stdout + remap.stderr
        count = footprint("sql", "SELECT count(*) AS n, max(iteration) AS k FROM events",
                          "--store", store, "--format", "csv")
        assert count.stdout.splitlines()[1] == "22,2", count.stdout


def test_given_gzipped_pretty_and_torn_files_when_ingested_then_each_is_read_or_named(
        tmp_path: Path) -> None:
    line = to_json(trace_request(agent_trace(41, calls=2)))
    zipped = tmp_path / "traces.jsonl.gz"
    zipped.write_bytes(gzip.compress(line + b"\n"))
    pretty = tmp_path / "export.json"  # one OTLP/JSON document, indented
    pretty.write_text(json.dumps(json.loads(line), indent=2))
    torn = tmp_path / "live.jsonl"  # the file exporter is still writing its last line
    torn.write_bytes(to_json(trace_request(agent_trace(43, calls=2))) + b"\n" + line[:300])
    store = str(tmp_path / "store")
    done = footprint("ingest", str(zipped), "--store", store)
    assert done.returncode == 0 and "1 runs mapped" in done.stdout, done.stdout + done.stderr
    done = footprint("ingest", str(pretty), str(torn), "--store", store)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "8 spans, 0 log records, 1 runs mapped" in done.stdout, done.stdout
    assert "4 spans of traces already in the store" in done.stderr, done.stderr  # read whole
    assert f"1 cut-off line ({torn} line 2: is the file still being written? ingest it again " \
           "when it is whole)" in done.stderr, done.stderr
    zstd = tmp_path / "traces.jsonl.zst"
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    done = footprint("ingest", str(zstd), "--store", store)
    assert done.returncode == 1
    assert f"1 zstd-compressed file ({zstd}: decompress it first with zstd -d" in done.stderr, \
        done.stderr
    runs = footprint("sql", "SELECT count(*) FROM runs", "--store", store, "--format", "csv")
    assert runs.stdout.splitlines()[1] == "2", runs.stdout
