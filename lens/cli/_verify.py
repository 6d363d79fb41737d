"""``footprint verify RUN``: exit 0 when the hash chain holds, 1 naming the first broken seq."""

from __future__ import annotations

import argparse

from lens.cli._common import open_from

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    from lens.cli._progress import progress
    from recorder import verify_run

    store = open_from(args)
    run_id = store.resolve_run(args.run)
    total = store.rows("SELECT count(*) FROM _events_all WHERE run_id = ?", [run_id])[0][0]
    with progress("verifying", int(total or 0), "records") as advance:
        result = verify_run(store, run_id, progress=lambda done, _total: advance(done))
    print(f"{run_id}: {result.summary()}")
    return 0 if result.valid else 1
