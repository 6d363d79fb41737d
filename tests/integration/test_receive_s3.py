"""Receivers writing one store on object storage (a local S3-compatible server: moto's
server mode on 127.0.0.1): ``footprint receive --store s3://…`` processes, each with its
own ``FOOTPRINT_CACHE`` as two machines would have, behind trace-id routing, store every
trace once in the bucket — also across a SIGKILL after acknowledging batches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from fanout_support import agent_runs, moto_bucket, moto_server, routed_runs
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from lens.cli import main
from recorder import open_store
from recorder.write._upload import uri_digest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TRACES = 20

ONCE = """
SELECT foreign_trace_id AS trace, count(DISTINCT run_id) AS runs FROM run_sources
GROUP BY ALL ORDER BY trace
"""
WHOLE = """
SELECT run_id, count(*) FILTER (WHERE type = 'llm.end') AS answers,
       count(*) - count(DISTINCT seq) AS twice FROM events GROUP BY run_id
"""


@pytest.fixture
def bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with moto_bucket(tmp_path, monkeypatch) as uri:
        yield uri


def _receiver(bucket: str, cache: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--grpc-port", "0", "--store", bucket, *extra],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT),
                                 "FOOTPRINT_CACHE": str(cache)})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.startswith("footprint receive: mapped again"):  # a restart: what was pending
        line = proc.stdout.readline()
    assert "OTLP/gRPC on " in line, line
    return proc, line.split("OTLP/gRPC on ")[1].split(")")[0]


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130


def _hex(ids: list[int]) -> list[str]:
    return sorted(f"{t:032x}" for t in ids)


def _stored_once(bucket: str, ids: list[int]) -> list[str]:
    """Every trace one run in the bucket, whole (both answers), no event stored twice;
    the runs."""
    with open_store(bucket) as store:
        once = store.rows(ONCE)
        whole = store.rows(WHOLE)
    assert [t for t, _ in once] == _hex(ids)
    assert {n for _, n in once} == {1}
    assert len(whole) == len(ids)
    assert {(answers, twice) for _, answers, twice in whole} == {(2, 0)}
    return [run for run, _, _ in whole]


def _verified(bucket: str, runs: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``footprint verify --store URI RUN`` says each run's chain is whole."""
    for run in runs:
        assert main(["verify", run, "--store", bucket]) == 0, capsys.readouterr()
    capsys.readouterr()


def test_given_two_receivers_on_two_caches_behind_trace_id_routing_when_the_sdk_exports_then_the_bucket_holds_every_run_once(  # noqa: E501
        bucket: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    caches = [tmp_path / f"machine-{k}" for k in range(2)]
    receivers = [_receiver(bucket, cache) for cache in caches]
    ids = routed_runs([target for _, target in receivers], TRACES)
    for proc, _ in receivers:
        _stop(proc)
    assert not [p for c in caches for p in (c / "staging").rglob("*.parquet")
                if "/live/" not in p.as_posix()]  # every sealed file uploaded
    runs = _stored_once(bucket, ids)
    assert main(["runs", "--store", bucket, "--limit", "100"]) == 0
    assert capsys.readouterr().out.count("complete") == TRACES
    assert main(["sql", "SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs",
                 "--format", "json", "--store", bucket]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": TRACES, "d": TRACES}]
    mirror = Path(os.environ["FOOTPRINT_CACHE"]) / "stores" / uri_digest(bucket)
    rows = duckdb.sql(
        "SELECT run_id, count(*) FILTER (WHERE type = 'llm.end'), list(DISTINCT filename) "
        f"FROM read_parquet('{mirror}/events/**/*.parquet', filename = true, "
        "union_by_name = true) GROUP BY run_id").fetchall()
    assert len(rows) == TRACES and {n for _, n, _ in rows} == {2}
    writers = {proc.pid: 0 for proc, _ in receivers}
    for _, _, files in rows:
        (pid,) = {int(Path(f).name.split("-")[1]) for f in files}  # one receiver per run
        writers[pid] += 1
    assert all(writers.values()), writers  # both machines wrote some of them
    _verified(bucket, runs, capsys)


@pytest.mark.parametrize("settle_s", [0.0, 0.6])
def test_given_a_receiver_killed_after_acknowledging_when_restarted_on_its_cache_then_every_acknowledged_trace_is_stored_once(  # noqa: E501
        bucket: str, tmp_path: Path, settle_s: float,
        capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "machine"
    proc, target = _receiver(bucket, cache)
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=target, insecure=True)
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # each span acknowledged
    ids = agent_runs(provider, TRACES)  # when this returns, every span was acknowledged
    if settle_s:
        import time
        time.sleep(settle_s)  # some runs written, maybe sealed, maybe uploaded
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    provider.shutdown()
    again, _ = _receiver(bucket, cache)
    _stop(again)
    _verified(bucket, _stored_once(bucket, ids), capsys)


def test_given_a_receiver_killed_while_the_bucket_was_down_when_restarted_then_the_runs_it_sealed_are_uploaded_first_and_stored_once(  # noqa: E501
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from moto.server import ThreadedMotoServer

    cache = tmp_path / "machine"
    with moto_server(tmp_path, monkeypatch) as (server, bucket):
        proc, target = _receiver(bucket, cache, "--seal-after", "0")  # sealed at once
        port = server.get_host_and_port()[1]
        server.stop()  # the bucket is gone: what the receiver seals is not uploaded
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=target, insecure=True)))
        ids = agent_runs(provider, TRACES)  # every span acknowledged
        provider.shutdown()
        sealed = _sealed_in(cache, deadline_s=30)
        proc.send_signal(signal.SIGKILL)  # runs sealed in the working directory only
        proc.wait(timeout=30)
        assert sealed
        again = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        again.start()
        try:
            restarted, _ = _receiver(bucket, cache)
            _stop(restarted)
            assert not _sealed_in(cache, deadline_s=0)  # the killed one's files uploaded
            _verified(bucket, _stored_once(bucket, ids), capsys)
        finally:
            again.stop()


def _sealed_in(cache: Path, *, deadline_s: float) -> list[Path]:
    """The sealed events files in the working directory (waiting up to ``deadline_s`` for
    one)."""
    import time

    end = time.monotonic() + deadline_s
    while True:
        found = [p for p in (cache / "staging").glob("*/events/**/*.parquet")
                 if not p.name.startswith(".")]
        if found or time.monotonic() > end:
            return found
        time.sleep(0.05)


@pytest.mark.parametrize("workers", [1, 2])
def test_given_a_receiver_on_a_cache_when_a_second_starts_on_it_with_the_same_store_then_one_line_refuses_it(  # noqa: E501
        bucket: str, tmp_path: Path, workers: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FOOTPRINT_CACHE": str(tmp_path / "m")}
    first = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                              "--workers", str(workers), "--store", bucket],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        assert first.stdout is not None
        assert "OTEL_EXPORTER_OTLP_ENDPOINT=" in first.stdout.readline()
        second = subprocess.run(
            [sys.executable, "-m", "lens.cli", "receive", "--port", "0", "--store", bucket],
            capture_output=True, text=True, cwd=ROOT, timeout=60, env=env)
    finally:
        _stop(first)
    assert second.returncode == 2, second.stderr
    assert second.stderr.count("\n") == 1
    assert f"another receiver on this machine (pid {first.pid})" in second.stderr
    assert "FOOTPRINT_CACHE" in second.stderr


@pytest.mark.parametrize(("argv", "fix"), [
    (["ingest", "--remap"], "footprint ingest --remap --store DIR"),
    (["doctor"], "footprint verify --store URI"),
    (["compact"], "query it as it is"),
    (["receive", "--evaluate", "examples/feedback_loop.py:helpful"], "judge the stored runs"),
])
def test_given_a_store_on_object_storage_when_a_command_it_cannot_serve_yet_runs_then_one_line_names_the_alternative(  # noqa: E501
        argv: list[str], fix: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--store", "s3://traces/p?endpoint_override=127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "not for a store on object storage yet" in err and fix in err
    assert err.count("\n") == 1


def test_given_a_bucket_that_cannot_be_reached_when_a_receiver_starts_then_it_refuses_in_one_line_and_maps_nothing(  # noqa: E501
        tmp_path: Path) -> None:
    dead = "s3://traces/p?endpoint_override=127.0.0.1:9&scheme=http&region=us-east-1"
    proc = subprocess.run(
        [sys.executable, "-m", "lens.cli", "receive", "--port", "0", "--store", dead],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "FOOTPRINT_CACHE": str(tmp_path),
             "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"})
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert "could not be read" in proc.stderr and "nothing was mapped" in proc.stderr


def test_given_a_file_ingested_twice_into_a_bucket_when_read_then_its_run_is_stored_once(
        bucket: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from otlp_build import agent_trace, to_json, trace_request

    lines = tmp_path / "traces.jsonl"
    lines.write_bytes(to_json(trace_request(agent_trace(31, calls=2))) + b"\n")
    assert main(["ingest", str(lines), "--store", bucket]) == 0
    assert "1 runs mapped" in capsys.readouterr().out
    main(["ingest", str(lines), "--store", bucket])  # what is mapped: read from the bucket
    again = capsys.readouterr()
    assert "0 runs mapped" in again.out and "4 spans of traces already in the store" in \
        again.err, again
    assert main(["sql", "SELECT count(*) AS n, count(DISTINCT seq) AS seqs FROM events",
                 "--store", bucket, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "22,22"


@pytest.mark.parametrize("argv", [["ingest", "--remap"], ["ingest", "traces.jsonl"]])
def test_given_a_receivers_working_directory_when_named_as_a_local_store_then_one_line_names_its_uri(  # noqa: E501
        bucket: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from otlp_build import agent_trace, to_json, trace_request

    from recorder.ingest import Intake

    monkeypatch.chdir(tmp_path)
    Path("traces.jsonl").write_bytes(to_json(trace_request(agent_trace(7, calls=1))) + b"\n")
    with Intake(bucket) as intake:
        work = intake.store
    assert main([*argv, "--store", str(work)]) == 2  # a remap there would upload runs again
    err = capsys.readouterr().err
    assert "is the working directory of a receiver writing" in err and bucket in err
    assert err.count("\n") == 1


ORDER = "ORD-904417"
"""What the bucket's redaction configuration keeps out (no API-key pattern matches it)."""


def _bucket_bytes(bucket: str) -> bytes:
    """Every object under the store's prefix, raw, plus every decoded Parquet cell."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from recorder.write._upload import open_uri

    fs, base = open_uri(bucket)
    out = bytearray()
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        if info.type == pafs.FileType.File:
            with fs.open_input_stream(info.path) as stream:
                out += stream.read()
            if info.path.endswith(".parquet"):
                out += repr(pq.read_table(info.path, filesystem=fs).to_pylist()).encode()
    return bytes(out)


def _post_order(endpoint: str, trace: int) -> None:
    import httpx
    from otlp_build import agent_trace, trace_request

    spans = [dict(s) for s in agent_trace(trace, calls=2)]
    for span in spans:
        span["attributes"] = {k: v.replace("refund A-1?", f"refund A-1? order {ORDER}")
                              if isinstance(v, str) else v
                              for k, v in span["attributes"].items()}
    body = trace_request(spans).SerializeToString()
    answer = httpx.post(f"{endpoint}/v1/traces", content=body, timeout=60,
                        headers={"Content-Type": "application/x-protobuf"})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("configured", [True, False], ids=["bucket-config", "control"])
def test_given_a_redaction_configuration_in_the_bucket_when_a_receiver_redacts_then_neither_the_bucket_nor_its_working_directory_holds_the_secret(  # noqa: E501
        bucket: str, tmp_path: Path, configured: bool) -> None:
    from store_bytes import every_byte

    from recorder.write._upload import open_uri

    if configured:
        fs, base = open_uri(bucket)
        with fs.open_output_stream(f"{base}/redaction.json") as out:
            out.write(b'{"patterns": ["ORD-[0-9]{6}"]}')
    cache = tmp_path / "machine"
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", bucket, "--redact"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT),
                                 "FOOTPRINT_CACHE": str(cache)})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    endpoint = line.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
    _post_order(endpoint, 41)
    _stop(proc)
    with open_store(bucket) as store:  # the run is there, the order's place marked
        said = [r[0] for r in store.rows("SELECT raw_content FROM injections "
                                         "WHERE raw_content LIKE 'refund A-1?%'")]
    assert said and all(("[redacted" in s) is configured for s in said), said
    held = _bucket_bytes(bucket) + every_byte(cache)
    assert (ORDER.encode() in held) is not configured  # the control finds it


def test_given_a_bad_redaction_configuration_in_the_bucket_when_read_then_the_error_names_it_and_the_fix(  # noqa: E501
        bucket: str) -> None:
    from footprint import ConfigError
    from recorder.ingest import store_redactor
    from recorder.write._upload import open_uri

    fs, base = open_uri(bucket)
    with fs.open_output_stream(f"{base}/redaction.json") as out:
        out.write(b'{"pattern": ["ORD-[0-9]{6}"]}')
    with pytest.raises(ConfigError) as caught:
        store_redactor(bucket)
    assert f"{bucket.split('?')[0]}/redaction.json" in str(caught.value)
    assert '{"patterns": [' in str(caught.value)


def test_given_a_bucket_that_cannot_be_reached_when_a_receiver_redacts_then_it_refuses_in_one_line(
        tmp_path: Path) -> None:
    dead = "s3://traces/p?endpoint_override=127.0.0.1:9&scheme=http&region=us-east-1"
    proc = subprocess.run(
        [sys.executable, "-m", "lens.cli", "receive", "--port", "0", "--redact",
         "--store", dead],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "FOOTPRINT_CACHE": str(tmp_path),
             "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "cannot read 's3://traces/p/redaction.json'" in proc.stderr
    assert "run without --redact" in proc.stderr


def _events_objects(bucket: str) -> list[str]:
    import pyarrow.fs as pafs

    from recorder.write._upload import open_uri

    fs, base = open_uri(bucket)
    return [i.path for i in fs.get_file_info(pafs.FileSelector(f"{base}/events",
                                                               recursive=True,
                                                               allow_not_found=True))
            if i.type == pafs.FileType.File and i.path.endswith(".parquet")]


def test_given_exports_within_the_seal_time_when_received_into_a_bucket_then_one_file_holds_them_all(  # noqa: E501
        bucket: str, tmp_path: Path) -> None:
    import time

    import httpx
    from otlp_build import agent_trace, trace_request

    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", bucket, "--seal-after", "6"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT),
                                 "FOOTPRINT_CACHE": str(tmp_path / "machine")})
    assert proc.stdout is not None
    endpoint = proc.stdout.readline().split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
    for export in range(3):  # three exports of whole traces: each ends all its runs
        body = trace_request([s for t in range(4) for s in agent_trace(100 + 4 * export + t,
                                                                     calls=2)])
        answer = httpx.post(f"{endpoint}/v1/traces", content=body.SerializeToString(),
                            headers={"Content-Type": "application/x-protobuf"}, timeout=60)
        assert answer.status_code == 200
        time.sleep(0.6)  # more than the intake's drain: each export written on its own
    assert _events_objects(bucket) == []  # held: younger than 6 s
    deadline = time.monotonic() + 60
    while not (found := _events_objects(bucket)):  # sealed and uploaded by a flush
        assert time.monotonic() < deadline, "the held file never reached the bucket"
        time.sleep(0.2)
    _stop(proc)
    assert len(found) == 1 and _events_objects(bucket) == found
    with open_store(bucket) as store:
        assert store.rows("SELECT count(*), count(DISTINCT foreign_trace_id) "
                          "FROM run_sources") == [(12, 12)]


@pytest.mark.parametrize(("given", "said"), [
    ("-1", "out of range; use 0 <= SECONDS <= 86400 (0: a file per export)"),
    ("soon", "is not a number of seconds")])
def test_given_a_bad_seal_time_when_receive_starts_then_one_usage_line_names_it(
        given: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["receive", "--seal-after", given, "--store", "s3://traces/p"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seal-after" in err and said in err
