"""Start of a receiver on a bucket store: how long ``footprint receive --store s3://…`` takes
to serve when the bucket already holds 10,000 agent runs.

The bucket is a local S3-compatible server (moto's ``ThreadedMotoServer`` on 127.0.0.1, in
this process). It is filled the way receivers fill it: :data:`WRITERS` ``footprint
receive --store URI`` processes one after the other, each with a ``FOOTPRINT_CACHE`` of its
own (machines of their own), all at once, each sent its share of the runs as OTLP/HTTP
protobuf bodies of :data:`PER_BODY` agent traces (4 spans each: the agent, two chat calls
with system text, messages, tool definitions and usage, one tool call; ``bench_ingest``'s),
one body every :data:`GAP_S`, then stopped with SIGINT (exit 130). They run with
``--seal-after 0``, so each body is sealed and uploaded on its own: the most objects a
receiver can leave (one per export, as every receiver did before ``--seal-after``; by
default, 60 s, the exports of a minute share one). The sealed files they uploaded are
what the bucket holds. Before anything is timed, ``open_store(uri)`` must count every run.

- ``bucket_start_10k_runs_cold_s``: wall time from launching ``python -m lens.cli receive
  --port 0 --store URI`` until its first stdout line (the endpoint line: it serves), with
  a new, empty ``FOOTPRINT_CACHE`` (a new machine: nothing mirrored), best of the repeats.
- ``bucket_start_10k_runs_warm_s``: the same with the cache of a receiver that already
  started once and was stopped (a restart: the mirror is there).
- ``bucket_start_empty_s``: the same against a prefix that holds nothing (the floor:
  interpreter, imports, the listing of nothing).
- ``bucket_mirror_10k_runs_cold_s``: ``recorder.store._remote.mirror(uri)`` alone, in this
  process, into a new cache (listing and downloading every sealed file): the part of a
  cold start that grows with the bucket.
- ``bucket_mirror_10k_runs_rtt20ms_s`` / ``…_serial_s``: that mirror through a TCP proxy
  on 127.0.0.1 that holds every chunk a client sends for :data:`RTT_S` (the round trip
  each request costs against a real bucket, which loopback lacks), with
  ``recorder.store._remote.DOWNLOADS`` files at once / one after the other.
- ``bucket_default_seal_10k_runs_objects`` / ``bucket_default_seal_start_10k_runs_cold_s``:
  the same fill into another prefix by receivers with the default ``--seal-after``: the
  objects it leaves, and a new machine's start on it.
- ``bucket_10k_runs_objects`` / ``bucket_10k_runs_mb``: the objects under the prefix and
  their total size (MB, 10^6 bytes).
- ``bucket_start_otel_span_us``: ``otel_span_us`` (one span through the OTel SDK) measured
  in this run, the yardstick of the machine's speed at the time.

``--quick``: 1,000 runs (the figures' names keep ``10k``; compare full runs only).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_ingest import _SYSTEM, _send, _stop  # noqa: E402
from bench_otel import span_us  # noqa: E402
from otlp_build import agent_trace, trace_request  # noqa: E402

ROOT = HERE.parent.parent
RUNS, QUICK_RUNS = 10_000, 1_000
WRITERS = 3
"""Receivers that fill the bucket, each with its own cache (its own writer ids)."""
PER_BODY = 20
"""Agent runs in one OTLP body (4 spans each): one export of an SDK's batch processor
(every 5 s) from a service doing 4 runs a second."""
GAP_S = 0.6
"""Between one writer's bodies: more than the receiver's drain (0.5 s), so each body is
written, sealed and uploaded on its own, as bodies 5 s apart are."""
RTT_S = 0.020
"""What the proxy adds to each request: a same-region round trip to object storage."""
_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "FOOTPRINT_CACHE")


def _note(text: str) -> None:
    print(f"[bucket_start] {text}", file=sys.stderr, flush=True)


def bodies(runs: int) -> list[bytes]:
    """``runs`` agent traces (ids 1..runs) as protobuf bodies of ``PER_BODY`` traces."""
    out = []
    for first in range(1, runs + 1, PER_BODY):
        spans = []
        for trace in range(first, min(first + PER_BODY, runs + 1)):
            spans += agent_trace(trace, calls=2, system=_SYSTEM)
        out.append(trace_request(spans).SerializeToString())
    return out


@contextmanager
def moto_bucket(prefix: str) -> Iterator[str]:
    """A bucket ``traces`` on moto's server on 127.0.0.1; the store URI of ``prefix`` in
    it. The ``AWS_*`` variables are set for the bucket and put back afterwards."""
    from moto.server import ThreadedMotoServer
    from pyarrow import fs as pafs

    saved = {name: os.environ.get(name) for name in _ENV}
    quiet, level = logging.getLogger("werkzeug"), logging.getLogger("werkzeug").level
    quiet.setLevel(logging.ERROR)  # not a line per request on stderr
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test")
        pafs.S3FileSystem(endpoint_override=f"{host}:{port}", scheme="http",
                          region="us-east-1", allow_bucket_creation=True).create_dir("traces")
        yield (f"s3://traces/{prefix}?endpoint_override={host}:{port}"
               "&scheme=http&region=us-east-1")
    finally:
        server.stop()
        quiet.setLevel(level)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def launch(uri: str, cache: Path, *extra: str) -> tuple[subprocess.Popen[str], float, str]:
    """A receiver on ``uri`` with ``cache`` as its ``FOOTPRINT_CACHE`` (and ``extra``
    options); the seconds from launching it to its first stdout line, and its endpoint."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FOOTPRINT_CACHE": str(cache)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", uri, *extra], stdout=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    took = time.perf_counter() - started
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=" in line, line
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # batch lines
    return proc, took, line.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]


def _feed(endpoint: str, sent: list[bytes]) -> None:
    """Post ``sent`` one body every :data:`GAP_S` (each body an export of its own)."""
    _send(endpoint, sent, GAP_S)


def fill(uri: str, runs: int, tmp: Path, seal_after: str | None = "0") -> None:
    """``runs`` agent runs into the bucket through :data:`WRITERS` receivers at once, with
    ``--seal-after seal_after`` (``None``: the default)."""
    from concurrent.futures import ThreadPoolExecutor

    sent = bodies(runs)
    started = time.perf_counter()
    extra = () if seal_after is None else ("--seal-after", seal_after)
    procs = [launch(uri, tmp / f"fill-{uri_tag(uri)}-{k}", *extra) for k in range(WRITERS)]
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(_feed, [endpoint for _, _, endpoint in procs],
                      [sent[k::WRITERS] for k in range(WRITERS)]))
    for proc, _, _ in procs:
        _stop(proc)
    _note(f"{WRITERS} writers, {len(sent)} bodies of {PER_BODY} runs "
          f"({time.perf_counter() - started:.1f}s)")


def uri_tag(uri: str) -> str:
    """The store's prefix in ``uri`` (``s3://traces/<prefix>?…``)."""
    return uri.split("?")[0].rsplit("/", 1)[1]


def objects(uri: str) -> tuple[int, int]:
    """(count, total bytes) of the objects under the store's prefix."""
    from pyarrow import fs as pafs

    from recorder.write._upload import open_uri

    fs, base = open_uri(uri)
    found = [i for i in fs.get_file_info(pafs.FileSelector(base, recursive=True))
             if i.type == pafs.FileType.File]
    return len(found), sum(int(i.size or 0) for i in found)


def check(uri: str, runs: int, cache: Path) -> float:
    """Assert the bucket holds ``runs`` runs, each one trace; the seconds ``mirror`` took
    into the new cache ``cache`` (this process's)."""
    from recorder import open_store
    from recorder.store._remote import mirror

    os.environ["FOOTPRINT_CACHE"] = str(cache)
    started = time.perf_counter()
    mirror(uri)
    took = time.perf_counter() - started
    with open_store(uri) as store:
        (count, traces), = store.rows(
            "SELECT count(DISTINCT run_id), count(DISTINCT foreign_trace_id) FROM run_sources")
    assert (count, traces) == (runs, runs), (count, traces, runs)
    return took


def _pump(src: socket.socket, dst: socket.socket, wait_s: float) -> None:
    """Copy ``src`` to ``dst`` (each chunk held ``wait_s`` first) until either closes."""
    try:
        while data := src.recv(1 << 16):
            if wait_s:
                time.sleep(wait_s)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for end in (src, dst):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@contextmanager
def delayed(uri: str, wait_s: float) -> Iterator[str]:
    """``uri`` through a TCP proxy on 127.0.0.1 that holds what a client sends for
    ``wait_s`` (one round trip per request); the answers come back at once."""
    found = re.search(r"endpoint_override=([^&]+)", uri)
    assert found is not None, uri
    up_host, up_port = found.group(1).rsplit(":", 1)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed: the measurement is over
            upstream = socket.create_connection((up_host, int(up_port)))
            for args in ((client, upstream, wait_s), (upstream, client, 0.0)):
                threading.Thread(target=_pump, args=args, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield uri.replace(found.group(1), f"127.0.0.1:{listener.getsockname()[1]}")
    finally:
        listener.close()


def mirror_s(uri: str, cache: Path, downloads: int) -> float:
    """Seconds ``mirror(uri)`` takes into the new cache ``cache``, ``downloads`` at once."""
    from recorder.store import _remote

    os.environ["FOOTPRINT_CACHE"] = str(cache)
    saved, _remote.DOWNLOADS = _remote.DOWNLOADS, downloads
    try:
        started = time.perf_counter()
        local = _remote.mirror(uri)
        took = time.perf_counter() - started
    finally:
        _remote.DOWNLOADS = saved
    assert any(local.glob("events/**/*.parquet")), local
    return took


def rtt_mirrors(uri: str, tmp: Path) -> tuple[float, float]:
    """(mirror seconds with :data:`RTT_S` a request, ``DOWNLOADS`` at once; the same one
    file after the other), each into a new cache."""
    from recorder.store._remote import DOWNLOADS

    with delayed(uri, RTT_S) as far:
        rtt = mirror_s(far, tmp / "rtt", DOWNLOADS)
        serial = mirror_s(far, tmp / "rtt-serial", 1)
    _note(f"mirror with {RTT_S * 1000:.0f} ms a request: {rtt:.2f}s "
          f"({DOWNLOADS} at once), {serial:.2f}s (one after the other)")
    return rtt, serial


def start_s(uri: str, cache: Path) -> float:
    """One receiver start on ``uri`` with ``cache``: its seconds to serve; stopped (130)."""
    proc, took, _ = launch(uri, cache)
    _stop(proc)
    return took


def starts(uri: str, tmp: Path, repeats: int) -> tuple[float, float]:
    """(best cold start, best warm start) on ``uri``: each cold one on a new cache, each
    warm one a restart on the cache a cold one left."""
    cold, warm = [], []
    for r in range(repeats):
        cache = tmp / f"start-{r}"
        cold.append(start_s(uri, cache))
        warm.append(start_s(uri, cache))
        _note(f"start {r + 1}/{repeats}: cold {cold[-1]:.2f}s, warm {warm[-1]:.2f}s")
    return min(cold), min(warm)


def figures(quick: bool) -> dict[str, float]:
    runs = QUICK_RUNS if quick else RUNS
    repeats = 1 if quick else 3
    with tempfile.TemporaryDirectory() as name, moto_bucket("prod") as uri:
        tmp = Path(name)
        empty = min(start_s(uri.replace("/prod?", "/empty?"), tmp / f"empty-{r}")
                    for r in range(repeats))
        _note(f"empty prefix: {empty:.2f}s; filling {runs} runs")
        fill(uri, runs, tmp)
        count, size = objects(uri)
        mirrored = check(uri, runs, tmp / "check")
        _note(f"{count} objects, {size / 1e6:.1f} MB; mirror alone {mirrored:.2f}s")
        cold, warm = starts(uri, tmp, repeats)
        rtt, serial = rtt_mirrors(uri, tmp)
        held = uri.replace("/prod?", "/held?")
        fill(held, runs, tmp, seal_after=None)
        held_count = objects(held)[0]
        check(held, runs, tmp / "check-held")  # every run there, once
        held_cold = min(start_s(held, tmp / f"held-{r}") for r in range(repeats))
        _note(f"with the default --seal-after: {held_count} objects, cold start "
              f"{held_cold:.2f}s")
    otel = span_us(quick)
    return {
        "bucket_start_10k_runs_cold_s": round(cold, 3),
        "bucket_start_10k_runs_warm_s": round(warm, 3),
        "bucket_start_empty_s": round(empty, 3),
        "bucket_mirror_10k_runs_cold_s": round(mirrored, 3),
        "bucket_mirror_10k_runs_rtt20ms_s": round(rtt, 3),
        "bucket_mirror_10k_runs_rtt20ms_serial_s": round(serial, 3),
        "bucket_default_seal_10k_runs_objects": float(held_count),
        "bucket_default_seal_start_10k_runs_cold_s": round(held_cold, 3),
        "bucket_10k_runs_objects": float(count),
        "bucket_10k_runs_mb": round(size / 1e6, 2),
        "bucket_start_otel_span_us": round(otel, 2),
    }


if __name__ == "__main__":
    print(figures("--quick" in sys.argv))
