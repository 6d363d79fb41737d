"""``footprint export-otlp RUN [--endpoint URL]``: replay a recorded run's spans to OTLP."""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import sys
from collections.abc import Iterator
from typing import Any

from lens.cli._common import seconds_arg

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``export-otlp`` on the CLI's sub-parsers (imports nothing heavy)."""
    p = subparsers.add_parser(
        "export-otlp",
        help="send a recorded run's spans to an OTLP endpoint, with original timestamps",
    )
    p.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    p.add_argument(
        "--endpoint", metavar="URL", default=None,
        help="the collector, e.g. http://127.0.0.1:4318 (default: OTEL_EXPORTER_OTLP_* "
             "variables, then http://localhost:4318)",
    )
    p.add_argument("--protocol", choices=("http/protobuf", "grpc"), default="http/protobuf",
                   help="OTLP transport (default http/protobuf; grpc usually listens on 4317)")
    p.add_argument("--header", metavar="KEY=VALUE", action="append", default=[],
                   help="an extra request header, e.g. an API key for a hosted backend")
    p.add_argument("--timeout", type=seconds_arg, default=10.0, metavar="SECONDS",
                   help="give up on the endpoint after this long (default 10)")
    p.add_argument("--content", action="store_true",
                   help="include message text (default: "
                        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)")
    p.add_argument("--openinference", action="store_true",
                   help="also write OpenInference attributes (Arize Phoenix and similar)")
    p.add_argument("--processes", type=_count, default=None, metavar="N",
                   help="processes that read, map and send pieces of the run (cut at "
                        "iteration ends; the same spans). Default: the cores for a run of "
                        "200,000 events or more, else 1")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number; e.g. --processes 2")
    return value


def _headers(pairs: list[str]) -> dict[str, str]:
    from footprint._errors import ConfigError

    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--header {pair!r} is not KEY=VALUE; write e.g. "
                              "--header 'x-api-key=abc123'")
        out[key.strip()] = value.strip()
    return out


def run(args: argparse.Namespace) -> int:
    from footprint._errors import RunError
    from lens.cli._common import open_from
    from lens.cli._progress import progress
    from recorder import StoreReader
    from recorder.otel import capture_content_from_env, export_otlp

    headers = _headers(args.header)
    content = True if args.content else capture_content_from_env()
    if args.openinference and not content:
        print("footprint export-otlp: note: --openinference without --content exports no "
              "message text; add --content to see prompts and answers", file=sys.stderr)
    store = open_from(args)
    run_id = store.resolve_run(args.run)
    total = StoreReader(store).summary(run_id).events
    with _exporter_quiet() as said, progress("exporting", total, "events") as advance:
        try:
            result = export_otlp(
                run_id, store=store, endpoint=args.endpoint, protocol=args.protocol,
                headers=headers, timeout_s=args.timeout, capture_content=content,
                openinference=args.openinference, progress=advance, processes=args.processes,
            )
        except RunError as exc:
            raise RunError(f"{exc}{_cause(said, args.endpoint)}") from None
    print(f"exported run {result.run_id}: {result.spans} spans, trace {result.trace_id}")
    return 0


@contextlib.contextmanager
def _exporter_quiet() -> Iterator[list[str]]:
    """OpenTelemetry's exporter logs every retry and the give-up; the command says one
    line instead. Yields the messages it kept, for that line's cause."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    logger, keep = logging.getLogger("opentelemetry.exporter"), Keep()
    propagate = logger.propagate
    logger.addHandler(keep)
    logger.propagate = False
    try:
        yield said
    finally:
        logger.removeHandler(keep)
        logger.propagate = propagate


_ERRNO = re.compile(r"\[Errno -?\d+\] ([^\"')]+)")


def _cause(said: list[str], endpoint: str | None) -> str:
    """`` (last error: …)``: whether the endpoint takes a connection at all, else what the
    exporter last said went wrong; nothing when neither tells."""
    refused = _connect_error(endpoint) if endpoint else None
    if refused:
        return f" (last error: {refused})"
    for message in reversed(said):
        found = _ERRNO.search(message)
        if found:
            return f" (last error: {found.group(1).strip()})"
    return f" (last error: {said[-1][:160]})" if said else ""


def _connect_error(endpoint: str) -> str | None:
    """Why a TCP connection to ``endpoint``'s host and port fails, or ``None`` if it opens."""
    import socket
    from urllib.parse import urlsplit

    try:
        url = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
        port = url.port or (443 if url.scheme == "https" else 4318)
    except ValueError:  # a port that is not a number: the exporter's own message says more
        return None
    try:
        with socket.create_connection((url.hostname or "localhost", port), timeout=2):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__
