"""OTLP intake figures: other frameworks' GenAI spans mapped and stored.

- ``ingest_spans_per_s``: spans mapped and stored per second of wall time by a running
  ``footprint receive`` (its own process), posted as OTLP/HTTP protobuf batches of 512 spans
  (agent traces of 4 spans: the agent, two chat calls with system text, messages, tool
  definitions and usage, one tool call), from the first POST until the receiver has
  flushed everything and exited.
- ``ingest_cpu_us_per_span``: the receiver's CPU time per span (its start-up, measured on a
  receiver that gets no batch, taken off).
- ``ingest_span_per_otel_span``: ``ingest_cpu_us_per_span`` / ``otel_span_us`` (one span
  through the OTel SDK, the same clock, measured in this run): goal ≤ 1.
- ``ingest_conversation_spans_per_s``: the same, for 10-turn conversations
  (``gen_ai.conversation.id``, each turn's requests holding every earlier turn's question
  and answer), in 512-span batches; ``ingest_conversation_ratio`` is it over the flat
  figure (goal ≥ 0.8).
- ``ingest_peak_rss_30k_mb``: the receiver's peak RSS (its own process: ``VmHWM``, read
  until it exits) after 30,000 such traces; ``ingest_rss_30k_over_1k`` is it over the
  peak after 1,000 (goal ≤ 1.2: memory flat).
- ``ingest_workers_2_speedup``: ``ingest_spans_per_s`` of ``footprint receive --workers 2``
  over that of ``--workers 1``, both fed by :data:`SENDERS` concurrent senders (one
  connection each) with the same bodies, best of the repeats each (goal ≥ 1.7 on 2 cores);
  ``ingest_workers_1_spans_per_s`` / ``ingest_workers_2_spans_per_s`` are the two figures
  and ``ingest_workers_<n>_cpu_us_per_span`` the CPU of the parent and its workers per span
  (their start-up, measured on a receiver that gets no batch, taken off);
  ``ingest_workers_<n>_cores_busy`` that CPU over the wall seconds: how many of the 2
  cores the receiver kept busy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import httpx  # noqa: E402
from bench_otel import span_us  # noqa: E402
from otlp_build import SpanSpec, agent_trace, conversation_turn, trace_request  # noqa: E402

BATCH = 512
_SYSTEM = ("You are the support desk of Kettle & Co. Refund policy: refunds inside 30 days "
           "of delivery, never for opened items. ") * 4


def batches(count: int) -> list[bytes]:
    """``count`` protobuf bodies of ``BATCH`` spans each (128 whole traces per body)."""
    out = []
    for b in range(count):
        spans = []
        for t in range(BATCH // 4):
            spans += agent_trace(1 + b * 1000 + t, calls=2, system=_SYSTEM)
        out.append(trace_request(spans).SerializeToString())
    return out


TURNS = 10


def conversation_batches(traces: int) -> list[bytes]:
    """``traces`` turns (conversations of ``TURNS``, each turn after the one before) as
    protobuf bodies of ``BATCH`` spans."""
    spans: list[SpanSpec] = []
    for n in range(traces):
        spans += conversation_turn(n // TURNS, n % TURNS, system=_SYSTEM)
    return [trace_request(spans[i:i + BATCH]).SerializeToString()
            for i in range(0, len(spans), BATCH)]


def _receiver(store: str, workers: int = 1) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent.parent)}
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", store, "--workers", str(workers)],
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]


def _peak_mb(pid: int) -> float:
    """The process's own peak RSS so far (``VmHWM``, in MB; 0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _stop(proc: subprocess.Popen[str]) -> tuple[float, float]:
    """SIGINT (the receiver flushes and exits 130); its CPU seconds and peak RSS in MB.

    The peak is the receiver's ``VmHWM``, read until it exits: its ``ru_maxrss`` is not
    its own (a child started by ``vfork`` and ``exec`` keeps its parent's peak, the
    benchmark's with every body it holds: 420 MB for 30,000 traces whatever the receiver
    used)."""
    peak = _peak_mb(proc.pid)
    proc.send_signal(signal.SIGINT)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peak = max(peak, _peak_mb(proc.pid))
        time.sleep(0.005)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 130, proc.returncode
    return usage.ru_utime + usage.ru_stime, peak


def ingest(bodies: list[bytes]) -> tuple[float, float, float]:
    """(wall seconds, receiver CPU seconds, receiver peak RSS MB) to take ``bodies`` into
    a fresh store."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, endpoint = _receiver(tmp)
        started = time.perf_counter()
        with httpx.Client(timeout=120) as client:
            for body in bodies:
                answer = client.post(f"{endpoint}/v1/traces", content=body,
                                     headers={"Content-Type": "application/x-protobuf"})
                assert answer.status_code == 200, answer.status_code
        cpu, rss = _stop(proc)
        return time.perf_counter() - started, cpu, rss


SENDERS = 4


def _send(endpoint: str, bodies: list[bytes], gap_s: float = 0.0) -> None:
    """Post ``bodies`` on one connection, each answered 200, ``gap_s`` apart."""
    with httpx.Client(timeout=300) as client:
        for body in bodies:
            answer = client.post(f"{endpoint}/v1/traces", content=body,
                                 headers={"Content-Type": "application/x-protobuf"})
            assert answer.status_code == 200, answer.status_code
            if gap_s:
                time.sleep(gap_s)


def ingest_concurrently(bodies: list[bytes], workers: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the receiver and its workers) to take ``bodies`` into
    a fresh store from :data:`SENDERS` senders at once."""
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory() as tmp:
        proc, endpoint = _receiver(tmp, workers)
        assert proc.stdout is not None
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # batch lines
        started = time.perf_counter()
        with ThreadPoolExecutor(SENDERS) as pool:
            list(pool.map(_send, [endpoint] * SENDERS,
                          [bodies[k::SENDERS] for k in range(SENDERS)]))
        cpu, _ = _stop(proc)
        return time.perf_counter() - started, cpu


def workers_figures(quick: bool) -> dict[str, float]:
    count = 16 if quick else 96  # ~50k spans: a few seconds each, the drain at the end amortized
    bodies = batches(count)
    spans = count * BATCH
    idle = {n: ingest_concurrently([], n)[1] for n in (1, 2)}  # start-up CPU alone
    one = min((ingest_concurrently(bodies, 1) for _ in range(1 if quick else 2)),
              key=lambda r: r[0])
    two = min((ingest_concurrently(bodies, 2) for _ in range(1 if quick else 2)),
              key=lambda r: r[0])
    return {
        "ingest_workers_1_spans_per_s": round(spans / one[0], 1),
        "ingest_workers_2_spans_per_s": round(spans / two[0], 1),
        "ingest_workers_2_speedup": round(one[0] / two[0], 3),
        "ingest_workers_1_cpu_us_per_span": round(max(one[1] - idle[1], 0.0) / spans * 1e6, 2),
        "ingest_workers_2_cpu_us_per_span": round(max(two[1] - idle[2], 0.0) / spans * 1e6, 2),
        "ingest_workers_1_cores_busy": round(max(one[1] - idle[1], 0.0) / one[0], 3),
        "ingest_workers_2_cores_busy": round(max(two[1] - idle[2], 0.0) / two[0], 3),
    }


def figures(quick: bool) -> dict[str, float]:
    count = 6 if quick else 24
    bodies = batches(count)
    spans = count * BATCH
    idle = min(ingest([])[1] for _ in range(2))
    wall, cpu, _ = min((ingest(bodies) for _ in range(1 if quick else 2)),
                       key=lambda r: r[0])
    cpu_us = max(cpu - idle, 0.0) / spans * 1e6
    otel = span_us(quick)
    talk = conversation_batches(count * BATCH // 4)
    talk_wall = min(ingest(talk)[0] for _ in range(1 if quick else 2))
    small = ingest(conversation_batches(1000))[2]
    large = ingest(conversation_batches(3000 if quick else 30_000))[2]
    return {
        "ingest_spans_per_s": round(spans / wall, 1),
        "ingest_conversation_spans_per_s": round(count * BATCH / talk_wall, 1),
        "ingest_conversation_ratio": round(spans / wall and (count * BATCH / talk_wall)
                                           / (spans / wall), 3),
        "ingest_peak_rss_1k_mb": round(small, 1),
        "ingest_peak_rss_30k_mb": round(large, 1),
        "ingest_rss_30k_over_1k": round(large / small, 3),
        "ingest_cpu_us_per_span": round(cpu_us, 2),
        "ingest_span_per_otel_span": round(cpu_us / otel, 3),
        "ingest_otel_span_us": round(otel, 2),
        **workers_figures(quick),
    }


if __name__ == "__main__":
    if "--workers" in sys.argv:  # the workers figures alone
        print(workers_figures("--quick" in sys.argv))
    else:
        print(figures("--quick" in sys.argv))
