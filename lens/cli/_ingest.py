"""``footprint ingest FILE… --store DIR``: OTLP files (OTLP/JSON lines as the Collector's
file exporter writes them, or OTLP protobuf) into the store as runs; ``--remap`` maps the
store's raw batches again. Exit 0 when all input was read, 1 when some was bad (counted,
the rest kept), 2 on bad arguments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``ingest`` on the CLI's subparsers."""
    p = sub.add_parser("ingest", help="map OTLP trace files from other frameworks into runs "
                                      "(or --remap the store's raw batches)")
    p.add_argument("files", metavar="FILE", nargs="*", help="OTLP/JSON lines or protobuf files")
    p.add_argument("--remap", action="store_true",
                   help="drop the runs earlier ingests mapped and map every stored raw batch "
                        "again (after a mapper upgrade); runs a compaction merged stay as "
                        "stored and their traces are skipped, so none is stored twice")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")
    p.add_argument("--redact", action="store_true",
                   help="redact before anything is written, raw batches included (the "
                        "store's redaction.json, else the API-key patterns)")


def redaction(args: argparse.Namespace) -> list[Any]:
    """``--redact``: the store's redaction as a processor list (empty without the flag); a
    store on object storage keeps it in the bucket."""
    from recorder.ingest import store_redactor
    from recorder.ingest._workdir import workdir

    if not args.redact:
        return []
    place = workdir(args.store)
    return [store_redactor(place.uri if place.uri is not None else place.root)]


def intake_for(args: argparse.Namespace, worker: int | None = None) -> Any:
    """The intake ``receive`` (or its worker ``worker``) serves: durable, redacted and
    sealed as the options ask."""
    from recorder.ingest import Intake

    return Intake(args.store, processors=redaction(args), durable=True, worker=worker,
                  seal_after_s=args.seal_after)


def run(args: argparse.Namespace) -> int:
    from lens.cli._exits import FINDING, OK, say
    from lens.cli._progress import intake_progress
    from recorder.ingest import ingest_files, remap
    from recorder.ingest._workdir import remote_refused
    from recorder.write._layout import resolve_store

    if bool(args.files) == bool(args.remap):
        raise ConfigError("ingest takes FILE… or --remap (not both, not neither); e.g. "
                          "`footprint ingest traces.jsonl --store DIR`")
    if args.remap:
        remote_refused(args.store, "ingest --remap", "copy a receiver's working directory's "
                       "ingest/raw into a new local store DIR and run `footprint ingest "
                       "--remap --store DIR`")
        gone, report = remap(resolve_store(args.store), processors=redaction(args))
        print(f"remapped: {gone} files of the earlier mapping dropped; {report.line()}")
    else:
        missing = [f for f in args.files if not Path(f).is_file()]
        if missing:
            raise ConfigError(f"no such file {missing[0]!r}; pass OTLP/JSON lines or OTLP "
                              "protobuf files")
        with intake_progress("ingest") as update:
            report = ingest_files(args.files, args.store, processors=redaction(args),
                                  progress=update)
        print(f"ingested: {report.line()}")
    for run_id in report.runs:
        print(f"  run {run_id}")
    from recorder.ingest._intake import KEPT

    problems = {why: n for why, n in report.problems.items() if why != KEPT}  # not a fault
    if not problems:
        return OK
    bad = ", ".join(f"{n} {why}" for why, n in sorted(problems.items()))
    say(f"footprint ingest: some input could not be mapped ({bad}); the rest was kept")
    return FINDING
