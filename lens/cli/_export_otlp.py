"""``footprint export-otlp RUN [--endpoint URL]``: replay a recorded run's spans to OTLP."""

from __future__ import annotations

import argparse
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
    from lens.cli._common import open_from
    from lens.cli._progress import progress
    from recorder import StoreReader
    from recorder.otel import export_otlp

    headers = _headers(args.header)
    store = open_from(args)
    run_id = store.resolve_run(args.run)
    total = StoreReader(store).summary(run_id).events
    with progress("exporting", total, "events") as advance:
        result = export_otlp(
            run_id, store=store, endpoint=args.endpoint, protocol=args.protocol,
            headers=headers, timeout_s=args.timeout,
            capture_content=True if args.content else None,
            openinference=args.openinference, progress=advance, processes=args.processes,
        )
    print(f"exported run {result.run_id}: {result.spans} spans, trace {result.trace_id}")
    return 0
