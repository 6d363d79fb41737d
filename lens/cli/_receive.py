"""``footprint receive --store DIR``: an OTLP receiver that maps other frameworks' GenAI
traces into the store as runs, until Ctrl-C (which flushes, then exits 130)."""

from __future__ import annotations

import argparse
import contextlib
import threading
from typing import Any

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


def _print_report(report: Any) -> None:
    if report.runs or report.problems:
        print(f"batch: {report.line()}", flush=True)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 130 after Ctrl-C (everything received is written first)."""
    from lens.cli._exits import INTERRUPTED
    from lens.cli._ingest import redaction
    from recorder.ingest import Intake, Receiver

    intake = Intake(args.store, processors=redaction(args))
    receiver = Receiver(intake, host=args.host, port=args.port, grpc_port=args.grpc_port,
                        allow_remote=args.allow_remote, on_report=_print_report).start()
    grpc = (f"; OTLP/gRPC on {args.host}:{receiver.grpc_port}"
            if receiver.grpc_port is not None else "")
    print(f"footprint receive: set OTEL_EXPORTER_OTLP_ENDPOINT={receiver.endpoint} "
          f"(OTLP/HTTP, protobuf or JSON{grpc}) and turn on the framework's content capture; "
          f"store {intake.store}; Ctrl-C stops", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    last = receiver.stop()
    totals = intake.totals
    problems = {k: v for k, v in totals.items() if k not in ("spans", "logs", "runs")}
    print(f"footprint receive: stopped; {totals['spans']} spans, {totals['logs']} log records, "
          f"{totals['runs']} runs mapped"
          + ("; " + ", ".join(f"{n} {k}" for k, n in sorted(problems.items())) if problems
             else "") + (f" (last flush: {last.line()})" if last.runs else ""), flush=True)
    return INTERRUPTED
