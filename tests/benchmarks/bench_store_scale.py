"""Store-scale figures: the CLI over a 1,000,000-event run and a 10,000-run store.

Each figure runs the real ``footprint`` command in a subprocess over a
generated store (``tests/store_scale.py``, written through a real
``ParquetSink``; cached under the temp dir between runs, so only the first
run pays for writing it). Quick mode uses 100k events and 1,000 runs.

``show_1m_first_line_ms``: ``footprint show RUN`` until its first line
(target < 500). ``verify_1m_s`` / ``export_otlp_1m_s``: whole commands
(the OTLP endpoint is a local receiver that takes and drops each request).
``runs_10k_ms``: ``footprint runs`` start to exit, outlines cached
(target < 1,000); ``*_cpu_s``/``*_cpu_ms``: the same commands' CPU time (user +
system), which a loaded machine does not inflate; ``runs_10k_cold_ms``: the
first listing, outlines computed.
``reader_rss_600k_mb``: peak RSS of ``footprint runs`` then ``show`` over a
store whose 600k events sit in a killed writer's live segment (target < 300;
60k in quick mode), each command's own high-water mark (``VmHWM``: a child's
``ru_maxrss`` starts at this benchmark's own size).
``verify_1m_peak_mb``: ``footprint verify`` over the 1M-event run (README: ~300);
``verify_20k_requests_peak_mb``: over a run of 20,000 model calls whose requests
are 16 KiB blobs each (~330 MB of text; 2,000 in quick mode): the blob check
must stream them, not hold them.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from store_scale import write_long_run, write_many_runs, write_requests_run  # noqa: E402

_CACHE = Path(tempfile.gettempdir()) / "footprint-bench-store-scale-v1"
_CLI = [sys.executable, "-m", "lens.cli"]


def _cached(name: str, make: Any) -> Path:
    """A generated store under the cache dir, written once (atomically renamed into place)."""
    final = _CACHE / name
    if not final.is_dir():
        tmp = _CACHE / f".{name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        make(tmp)
        os.replace(tmp, final)
    return final


def _first_line_ms(args: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen([*_CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    took = (time.perf_counter() - started) * 1e3
    proc.kill()
    proc.wait(timeout=30)
    assert line, f"{args} printed nothing"
    return round(took, 1)


CPU: dict[str, float] = {}
"""Per command (its first word), the child's CPU seconds (user + system) of the last run:
on a loaded machine this, not the wall time, shows what the command costs."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _whole_s(args: list[str], ok: tuple[int, ...] = (0,)) -> float:
    started, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([*_CLI, *args], capture_output=True, text=True, timeout=1800,
                          check=False)
    took = time.perf_counter() - started
    CPU[args[0]] = _children_cpu() - cpu
    assert done.returncode in ok, f"{args}: {done.returncode} {done.stderr[-500:]}"
    return took


class _Drop(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _export_s(store: Path) -> float:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Drop)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        return _whole_s(["export-otlp", "last", "--store", str(store), "--endpoint", url])
    finally:
        server.shutdown()
        server.server_close()


_KILLED_WRITER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from store_scale import run_events
from recorder import ParquetSink
sink = ParquetSink({root!r}, seal_rows=10**9)
batch = []
for event in run_events(0, {iterations}):
    if event.type == "run.end":
        break  # killed in flight: the run never ends, the segment is never sealed
    batch.append(event)
    if len(batch) == 8192:
        sink.export(batch)
        batch = []
sink.export(batch)
sink.force_flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_writer(root: Path, events: int) -> None:
    code = _KILLED_WRITER.format(tests=str(HERE.parent), root=str(root),
                                 iterations=events // 8)
    done = subprocess.run([sys.executable, "-c", code], timeout=1800, check=False)
    assert done.returncode == -signal.SIGKILL, done.returncode
    assert list((root / "live").glob("*.events.arrows")), "the killed writer left no segment"


def _peak_rss_mb(args_list: list[list[str]]) -> float:
    """Peak RSS of the commands, each in a fresh child (measured by the child itself)."""
    peak = 0.0
    probe = ("import resource, runpy, sys; sys.argv = {argv!r}\n"
             "try:\n    runpy.run_module('lens.cli', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "sys.path.insert(0, {here!r}); from bench_tui import peak_rss_mb\n"
             "print(peak_rss_mb(), file=sys.stderr)")
    for args in args_list:
        code = probe.format(argv=["footprint", *args], here=str(HERE))
        done = subprocess.run([sys.executable, "-c", code],
                              capture_output=True, text=True, timeout=1800, check=False)
        peak = max(peak, float(done.stderr.strip().splitlines()[-1]))
    return round(peak, 1)


def figures(quick: bool) -> dict[str, float]:
    events, runs, live = (100_000, 1_000, 60_000) if quick else (1_000_000, 10_000, 600_000)
    _CACHE.mkdir(parents=True, exist_ok=True)
    big = _cached(f"long-{events}", lambda p: write_long_run(p, events))
    many = _cached(f"many-{runs}", lambda p: write_many_runs(p, runs))
    killed = _cached(f"killed-{live}", lambda p: _killed_writer(p, live))
    _whole_s(["runs", "--store", str(big)])  # outlines cached before the timed runs
    first_line = _first_line_ms(["show", "last", "--store", str(big)])
    verify = _whole_s(["verify", "last", "--store", str(big)])
    verify_cpu = CPU["verify"]
    export = _export_s(big)
    export_cpu = CPU["export-otlp"]
    cold_copy = Path(tempfile.mkdtemp()) / "many"
    shutil.copytree(many, cold_copy, ignore=shutil.ignore_patterns("summaries"))
    cold = _whole_s(["runs", "--store", str(cold_copy)])
    shutil.rmtree(cold_copy.parent, ignore_errors=True)
    _whole_s(["runs", "--store", str(many)])
    warm = min(_whole_s(["runs", "--store", str(many)]) for _ in range(3))
    runs_cpu = CPU["runs"]
    rss = _peak_rss_mb([["runs", "--store", str(killed)],
                        ["show", "last", "--store", str(killed)]])
    calls = 2_000 if quick else 20_000
    requests = _cached(f"requests-{calls}", lambda p: write_requests_run(p, calls, 16_384))
    verify_rss = _peak_rss_mb([["verify", "last", "--store", str(big)]])
    verify_blobs_rss = _peak_rss_mb([["verify", "last", "--store", str(requests)]])
    return {
        "store_scale_events": float(events),
        "store_scale_runs": float(runs),
        "show_1m_first_line_ms": first_line,
        "verify_1m_s": round(verify, 2),
        "verify_1m_cpu_s": round(verify_cpu, 2),
        "export_otlp_1m_s": round(export, 2),
        "export_otlp_1m_cpu_s": round(export_cpu, 2),
        "runs_10k_ms": round(warm * 1e3, 1),
        "runs_10k_cpu_ms": round(runs_cpu * 1e3, 1),
        "runs_10k_cold_ms": round(cold * 1e3, 1),
        "reader_rss_600k_mb": rss,
        "verify_1m_peak_mb": verify_rss,
        "verify_20k_requests_peak_mb": verify_blobs_rss,
    }


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
