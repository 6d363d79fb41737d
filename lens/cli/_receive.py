"""``footprint receive --store DIR``: an OTLP receiver that maps other frameworks' GenAI
traces into the store as runs, until Ctrl-C (which flushes, then exits 130)."""

from __future__ import annotations

import argparse
import contextlib
import threading
from typing import Any

from footprint._errors import ConfigError
from lens.cli._common import key_file_option, seal_after_arg

__all__ = ["add_parser", "run"]

_EXAMPLE = "examples/feedback_loop.py:helpful"


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
                   help="the store directory, or a storage URI (s3://bucket/prefix?…: the "
                        "receiver's own state stays in $FOOTPRINT_CACHE/staging) (default: "
                        "$FOOTPRINT_STORE or ./.footprint)")
    p.add_argument("--redact", action="store_true",
                   help="redact before anything is written, raw batches included (the "
                        "store's redaction.json, else the API-key patterns)")
    p.add_argument("--seal-after", type=seal_after_arg, default=None, metavar="SECONDS",
                   help="seal (and, on a storage URI, upload) a file of runs once they have "
                        "all ended and it is this old (default 60 on a storage URI, 0 on a "
                        "local store; 0: a file per export)")
    p.add_argument("--evaluate", metavar="MODULE:FUNC", default=None,
                   help="judge the runs as they are mapped, in the background: def "
                        "FUNC(run) -> recorder.Score, as `footprint evaluate --judge` takes")
    p.add_argument("--sample", type=_fraction, default=None, metavar="RATE",
                   help="with --evaluate: judge this fraction of the runs, chosen by a hash "
                        "of the run id (default 1: every run), e.g. 0.1")
    key_file_option(p, "online scores are chained with it")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="worker processes (default 1; one per core): each its own store "
                        "writer, all behind --port; a trace is mapped by one of them")
    p.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--worker-fds", default=None, help=argparse.SUPPRESS)
    p.add_argument("--peers", default=None, help=argparse.SUPPRESS)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction above 0 and at most 1; "
                                         "pass e.g. 0.1")
    return value


def _online(args: argparse.Namespace, store: Any) -> Any:
    """The online evaluation ``--evaluate`` asks for (``None`` without it)."""
    from lens.cli._common import chain_key_from
    from lens.playback._agent_ref import load_target
    from recorder import OnlineEvaluation

    if args.evaluate is None:
        if args.sample is not None:
            raise ConfigError(f"--sample {args.sample} without --evaluate: name the judge, "
                              "e.g. --evaluate examples/feedback_loop.py:helpful")
        return None
    judge = load_target(args.evaluate, flag="--evaluate", example=_EXAMPLE,
                        kind="a function run -> recorder.Score")
    return OnlineEvaluation(store, judge, sample=1.0 if args.sample is None else args.sample,
                            by=f"judge:{args.evaluate}",
                            chain_key=chain_key_from(args.key_file))


def _evaluated(online: Any) -> str:
    """What the online judge did, in a line (every figure counted)."""
    stats = online.stats()
    line = (f"footprint receive: online evaluation: {stats.sampled} of {stats.seen} runs "
            f"sampled, {stats.judged} judged, {stats.scores} scores recorded")
    if stats.missing:
        line += f", {stats.missing} not found ended in the store in time"
    if stats.waiting:
        line += f", {stats.waiting} left unjudged"
    if stats.failed:
        run_id, why = next(iter(stats.failed.items()))
        line += f"; the judge failed on {len(stats.failed)} (first on {run_id}: {why})"
    return line


def _reporter(online: Any) -> Any:
    def report_batch(report: Any) -> None:
        if report.runs or report.problems:
            print(f"batch: {report.line()}", flush=True)
        if online is not None and report.runs:
            online.ended(report.runs)
    return report_batch


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


def _return_freed_memory() -> None:
    """Arrow's jemalloc pool hands freed pages back to the system at once, not after its
    decay time: a receiver converts and writes a batch of rows every half second, and
    the pages each freed sat until the next decay (30,000 10-turn conversation traces:
    peak ~280 MB, ~250 MB this way). Only for this process (never a host's)."""
    import pyarrow as pa

    if pa.default_memory_pool().backend_name == "jemalloc":
        pa.jemalloc_set_decay_ms(0)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 130 after Ctrl-C (everything acknowledged is written first;
    a second Ctrl-C exits at once and the next start finishes the job). ``--workers N``
    above 1: N worker processes (``lens.cli._receive_workers``)."""
    from lens.cli._receive_workers import serve_workers, worker

    if args.workers < 1:
        raise ConfigError(f"receive --workers {args.workers}: a number of worker processes "
                          ">= 1 (one per core; 1 serves in this process)")
    if args.workers > 1 and args.evaluate is not None:
        raise ConfigError(f"receive --workers {args.workers} --evaluate {args.evaluate}: online "
                          "evaluation runs in a single receiver; use --workers 1, or judge "
                          "the stored runs afterwards with `footprint evaluate`")
    _refuse_remote(args)
    _own_interrupts()
    _return_freed_memory()
    if args.worker is not None:
        return worker(args)
    if args.workers > 1:
        return serve_workers(args)
    return _serve(args)


def _where(intake: Any) -> str:
    if intake.uri is None:
        return str(intake.store)
    return f"{intake.uri} (working directory {intake.store})"


def _refuse_remote(args: argparse.Namespace) -> None:
    """What a receiver into object storage does not do yet, refused in one line."""
    from recorder.ingest._workdir import remote_refused

    if args.evaluate is not None:
        remote_refused(args.store, f"receive --evaluate {args.evaluate}", "judge the stored "
                       "runs afterwards, or receive into a local store")


def _serve(args: argparse.Namespace) -> int:
    """One receiver in this process."""
    from lens.cli._exits import INTERRUPTED
    from lens.cli._ingest import intake_for
    from recorder.ingest import Receiver

    intake = intake_for(args)
    online = _online(args, intake.store)
    on_report = _reporter(online)
    receiver = None
    with contextlib.suppress(KeyboardInterrupt):
        recovered = intake.recover()
        if recovered.spans or recovered.problems:
            print(f"footprint receive: mapped again what an earlier receiver acknowledged "
                  f"but had not written: {recovered.line()}", flush=True)
        if online is not None and recovered.runs:
            online.ended(recovered.runs)
        receiver = Receiver(intake, host=args.host, port=args.port, grpc_port=args.grpc_port,
                            allow_remote=args.allow_remote, on_report=on_report).start()
        grpc = (f"; OTLP/gRPC on {args.host}:{receiver.grpc_port}"
                if receiver.grpc_port is not None else "")
        print(f"footprint receive: set OTEL_EXPORTER_OTLP_ENDPOINT={receiver.endpoint} "
              f"(OTLP/HTTP, protobuf or JSON{grpc}) and turn on the framework's content "
              f"capture; store {_where(intake)}; Ctrl-C stops", flush=True)
        threading.Event().wait()
    _second_interrupt(intake)
    print(f"footprint receive: stopping — writing what was acknowledged ({intake.pending} raw "
          "batches pending; Ctrl-C again exits now, the next start finishes)", flush=True)
    last = receiver.stop() if receiver is not None else intake.close()
    if online is not None:
        online.ended(last.runs)
        online.close()
        print(_evaluated(online), flush=True)
    totals = intake.totals
    problems = {k: v for k, v in totals.items() if k not in ("spans", "logs", "runs")}
    print(f"footprint receive: stopped; {totals['spans']} spans, {totals['logs']} log records, "
          f"{totals['runs']} runs mapped"
          + ("; " + ", ".join(f"{n} {k}" for k, n in sorted(problems.items())) if problems
             else "") + (f" (last flush: {last.line()})" if last.runs else ""), flush=True)
    return INTERRUPTED
