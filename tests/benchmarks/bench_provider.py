"""Provider figures: footprint's own cost per model call over HTTP.

- ``provider_call_overhead_us``: CPU microseconds this process spends per
  ``OpenAIChat.complete`` (build the body, encode it, send it through the
  provider's pooled httpx client, read and decode the reply, map it to an
  ``LLMResponse``) against a local server that answers at once. The server
  runs in another process, so its time is not counted: the figure is
  ``time.process_time()`` of the calling process (every thread of it) over
  many calls on one warm connection, divided by the calls; the median of
  several rounds. Goal: ≤ 20 OTel span times.
- ``provider_stream_call_overhead_us``: the same with ``stream=True`` and a
  reply of 24 server-sent events (text in pieces, usage in the last chunk).
- ``provider_call_fresh_client_us``: the same call through a new provider
  each time (a new client on the process's shared SSL context, a new
  connection).
- ``run_sync_overhead_us``: the same call as ``Agent.run_sync`` makes it ("run_sync
  in a loop"): each in a fresh event loop (``run_to_end``, run_sync's own
  runner), on the process's pooled connection (it outlives each loop: the
  server sees one connection for every round); ``run_sync_per_otel_span`` its
  ratio to a span measured just before, per round, as below. Goal: ≤ 40 OTel
  span times.
- ``provider_call_per_otel_span``: per round, the calls' CPU divided by one
  OTel span's cost measured just before them (``bench_otel.span_us``, quick);
  the median of the rounds (the spans' median over every round, the
  ``run_sync`` ones too, is printed on stderr as ``otel_span_us`` and kept as
  ``provider_otel_span_us``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from footprint.providers import LLMRequest, Message, OpenAIChat

HERE = Path(__file__).resolve().parent
REPLY = json.dumps({
    "id": "chatcmpl-1", "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "It is sunny in Oslo today."}}],
    "usage": {"prompt_tokens": 40, "completion_tokens": 8},
}).encode()
PIECES = [f"piece {k} " for k in range(22)]
STREAM = b"".join(
    [b"data: " + json.dumps({"id": "c1", "model": "m", "choices": [
        {"index": 0, "delta": {"content": p}, "finish_reason": None}]}).encode() + b"\n\n"
     for p in PIECES]
    + [b'data: {"id": "c1", "choices": [], "usage": {"prompt_tokens": 40, '
       b'"completion_tokens": 22}}\n\n', b"data: [DONE]\n\n"])


class _Instant(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        data, kind = (STREAM, "text/event-stream") if body.get("stream") else (
            REPLY, "application/json")
        head = (f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\n"
                f"content-length: {len(data)}\r\n\r\n").encode()
        self.wfile.write(head + data)  # one write: no Nagle wait between head and body

    def log_message(self, format: str, *args: object) -> None:
        return


def serve() -> None:
    """Answer at once on 127.0.0.1; print the port, serve until killed."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Instant)
    httpd.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    httpd.daemon_threads = True
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


def _request() -> LLMRequest:
    return LLMRequest(model="m", system="You are a weather assistant. Be terse.",
                      messages=(Message(role="user", content="Weather in Oslo?"),),
                      temperature=0.0, max_tokens=64, seed=0)


async def _pooled_rounds(
    base_url: str, stream: bool, calls: int, rounds: int, span: Callable[[], float]
) -> list[tuple[float, float]]:
    """Per round: µs of CPU per call, and one span's µs measured just before it."""
    model = OpenAIChat("m", base_url=base_url, trust_env=False, stream=stream)
    request = _request()
    before = model.pool.built
    await model.complete(request)  # warm: connect once
    samples = []
    for _ in range(rounds):
        span_us = span()
        started = time.process_time()
        for _ in range(calls):
            await model.complete(request)
        samples.append(((time.process_time() - started) / calls * 1e6, span_us))
    await model.aclose()
    assert model.pool.built == before + 1
    return samples


async def _one_call(model: OpenAIChat, request: LLMRequest) -> None:
    await model.complete(request)


def _run_sync_rounds(
    base_url: str, calls: int, rounds: int, span: Callable[[], float]
) -> list[tuple[float, float]]:
    """Per round: µs of CPU per call made in a fresh loop each time, and one span's µs."""
    from footprint.agent._sync import run_to_end

    model = OpenAIChat("m", base_url=base_url, trust_env=False)
    request = _request()
    before = model.pool.built
    run_to_end(_one_call(model, request))  # warm: imports, the shared SSL context
    samples = []
    for _ in range(rounds):
        span_us = span()
        started = time.process_time()
        for _ in range(calls):
            run_to_end(_one_call(model, request))
        samples.append(((time.process_time() - started) / calls * 1e6, span_us))
    assert model.pool.built == before + 1  # one client (and connection) for every loop
    model.close()
    return samples


async def _fresh_clients(base_url: str, calls: int) -> float:
    request = _request()
    started = time.process_time()
    for _ in range(calls):
        model = OpenAIChat("m", base_url=base_url, trust_env=False)
        await model.complete(request)
        await model.aclose()
    return (time.process_time() - started) / calls * 1e6


def _otel_span(quick: bool) -> Callable[[], float]:
    """``bench_otel.span_us``: one OTel span's CPU µs, as ``otel_span_us`` measures it."""
    spec = importlib.util.spec_from_file_location("_bench_otel_for_provider",
                                                  HERE / "bench_otel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda: float(module.span_us(True))


def figures(quick: bool) -> dict[str, float]:
    """Rounds alternate a span measurement and the calls, so load drift on a shared
    machine moves both; the ratio is the median of the rounds' ratios."""
    path = os.pathsep.join(filter(None, [str(HERE.parent.parent), os.environ.get("PYTHONPATH")]))
    proc = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": path})
    span = _otel_span(quick)
    try:
        assert proc.stdout is not None
        base_url = f"http://127.0.0.1:{proc.stdout.readline().strip()}/v1"
        calls, rounds = (100, 3) if quick else (200, 11)
        plain = asyncio.run(_pooled_rounds(base_url, False, calls, rounds, span))
        streamed = asyncio.run(_pooled_rounds(base_url, True, calls, rounds, span))
        fresh = asyncio.run(_fresh_clients(base_url, 20 if quick else 50))
        synced = _run_sync_rounds(base_url, calls // 4, rounds, span)
    finally:
        proc.kill()
        proc.wait()
    span_us = statistics.median(s for _, s in [*plain, *synced])
    print(f"[bench] provider: otel_span_us={span_us:.2f} (median over its rounds)",
          file=sys.stderr)
    return {
        "provider_call_overhead_us": round(statistics.median(c for c, _ in plain), 1),
        "provider_stream_call_overhead_us": round(statistics.median(c for c, _ in streamed), 1),
        "provider_call_fresh_client_us": round(fresh, 1),
        "provider_call_per_otel_span": round(statistics.median(c / s for c, s in plain), 2),
        "run_sync_overhead_us": round(statistics.median(c for c, _ in synced), 1),
        "run_sync_per_otel_span": round(statistics.median(c / s for c, s in synced), 2),
        "provider_otel_span_us": round(span_us, 2),
    }


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        print(figures("--quick" in sys.argv))
