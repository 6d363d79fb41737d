"""``footprint receive --store DIR``: an OTLP receiver that maps other frameworks' GenAI
traces into the store as runs, until Ctrl-C (which flushes, then exits 130)."""

from __future__ import annotations

import argparse
import contextlib
import threading
from typing import Any

from footprint._errors import ConfigError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``receive`` on the CLI's subparsers."""
    p = sub.add_parser(
        "receive", help="receive OpenTelemetry GenAI traces (OTLP/HTTP, optional gRPC) from "
                        "other frameworks into the store as runs")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs "
                        "--allow-remote)")
    p.add_argument("--port", type=int, default=4318, help="OTLP/HTTP port (default 4318; 0: any)")
    p.add_argument("--grpc-port", type=int, default=None, metavar="PORT",
                   help="also serve OTLP/gRPC on this port (4317 is the usual one)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --host (anyone reaching it writes into the store)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")
    p.add_argument("--redact", action="store_true",
                   help="redact before anything is written, raw batches included (the "
                        "store's redaction.json, else the API-key patterns)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="worker processes (default 1; one per core): each its own store "
                        "writer, all behind --port; a trace is mapped by one of them")
    p.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--worker-fds", default=None, help=argparse.SUPPRESS)
    p.add_argument("--peers", default=None, help=argparse.SUPPRESS)


def _print_report(report: Any) -> None:
    if report.runs or report.problems:
        print(f"batch: {report.line()}", flush=True)


def _second_interrupt(intake: Any) -> None:
    """While draining: a second Ctrl-C exits at once; the pending raw batches stay for
    the next start."""
    import os
    import signal

    from lens.cli._exits import INTERRUPTED, say

    def now(signum: int, frame: object) -> None:
        say(f"footprint receive: stopped before the drain finished; {intake.pending} raw "
            "batches left pending — the next `footprint receive` on this store maps them")
        os._exit(INTERRUPTED)
    signal.signal(signal.SIGINT, now)


def _own_interrupts() -> None:
    """The command drains what it acknowledged itself, however long that takes: the CLI's
    watchdog (which ends a command stuck in native code 1.5 s after Ctrl-C) is off."""
    import signal

    with contextlib.suppress(ValueError):  # not the main thread: there is no watchdog
        signal.set_wakeup_fd(-1)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 130 after Ctrl-C (everything acknowledged is written first;
    a second Ctrl-C exits at once and the next start finishes the job). ``--workers N``
    above 1: N worker processes (``lens.cli._receive_workers``)."""
    from lens.cli._receive_workers import serve_workers, worker

    if args.workers < 1:
        raise ConfigError(f"receive --workers {args.workers}: a number of worker processes "
                          ">= 1 (one per core; 1 serves in this process)")
    _own_interrupts()
    if args.worker is not None:
        return worker(args)
    if args.workers > 1:
        return serve_workers(args)
    return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    """One receiver in this process."""
    from lens.cli._exits import INTERRUPTED
    from lens.cli._ingest import redaction
    from recorder.ingest import Intake, Receiver

    intake = Intake(args.store, processors=redaction(args), durable=True)
    receiver = None
    with contextlib.suppress(KeyboardInterrupt):
        recovered = intake.recover()
        if recovered.spans or recovered.problems:
            print(f"footprint receive: mapped again what an earlier receiver acknowledged "
                  f"but had not written: {recovered.line()}", flush=True)
        receiver = Receiver(intake, host=args.host, port=args.port, grpc_port=args.grpc_port,
                            allow_remote=args.allow_remote, on_report=_print_report).start()
        grpc = (f"; OTLP/gRPC on {args.host}:{receiver.grpc_port}"
                if receiver.grpc_port is not None else "")
        print(f"footprint receive: set OTEL_EXPORTER_OTLP_ENDPOINT={receiver.endpoint} "
              f"(OTLP/HTTP, protobuf or JSON{grpc}) and turn on the framework's content "
              f"capture; store {intake.store}; Ctrl-C stops", flush=True)
        threading.Event().wait()
    _second_interrupt(intake)
    print(f"footprint receive: stopping — writing what was acknowledged ({intake.pending} raw "
          "batches pending; Ctrl-C again exits now, the next start finishes)", flush=True)
    last = receiver.stop() if receiver is not None else intake.close()
    totals = intake.totals
    problems = {k: v for k, v in totals.items() if k not in ("spans", "logs", "runs")}
    print(f"footprint receive: stopped; {totals['spans']} spans, {totals['logs']} log records, "
          f"{totals['runs']} runs mapped"
          + ("; " + ", ".join(f"{n} {k}" for k, n in sorted(problems.items())) if problems
             else "") + (f" (last flush: {last.line()})" if last.runs else ""), flush=True)
    return INTERRUPTED
