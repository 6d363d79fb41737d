"""``footprint compact``: merge the store's small sealed files (``recorder.write._compact``)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``compact`` on the CLI's sub-parsers (imports nothing heavy)."""
    p = subparsers.add_parser(
        "compact", help="merge the store's small sealed files into a few (runs verify as "
                        "before; readers may read meanwhile)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    from lens.cli._common import open_from
    from recorder.ingest._workdir import remote_refused
    from recorder.write._compact import compact, finish_compactions

    remote_refused(args.store, "compact", "compaction is off for object storage (a merged "
                   "file would sit in the bucket beside its originals); query it as it is")
    store = open_from(args)  # a missing store or folder fails here, in one line
    finished = finish_compactions(store.root)
    if finished:
        print(f"finished an interrupted compaction: deleted {len(finished)} replaced files "
              "(never read again)")
    merged = compact(store.root)
    for item in merged:
        if item.replaced:
            print(f"merged   {len(item.replaced)} files ({item.rows} rows) -> {item.merged}")
    if not any(item.replaced for item in merged):
        print(f"nothing to merge in {store.root} (or another compactor is at work)")
    return 0
