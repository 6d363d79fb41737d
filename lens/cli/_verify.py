"""``footprint verify RUN [--key-file FILE]``: exit 0 when the hash chain holds, 1 naming
the first broken seq, 4 when the run's writer died before heading its last batch (a crash:
those records are unsealed, not tampered). With a key (the file's bytes, one trailing
newline dropped; else ``$FOOTPRINT_CHAIN_KEY``) every head must be the HMAC the keyed
writer stored."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lens.cli._common import chain_key_from, open_from
from lens.cli._exits import FINDING, INCOMPLETE, OK

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["run"]


def _resolve(store: Store, ref: str) -> str:
    """The run ``ref`` names; a run whose events are gone (a damaged or deleted file) but
    whose chain heads remain is found by its heads, so verify can name what is missing."""
    from footprint._errors import ConfigError
    from recorder.store._runref import resolve_ref

    try:
        return store.resolve_run(ref)
    except ConfigError:
        found = [r for (r,) in store.rows(
            "SELECT DISTINCT run_id FROM _chain_all WHERE run_id = ? OR "
            "(length(?) > 0 AND starts_with(run_id, ?)) ORDER BY run_id", [ref, ref, ref])]
        if not found:
            raise
        return resolve_ref(ref, found, where=f"the chain heads of {str(store.root)!r}")


def run(args: argparse.Namespace) -> int:
    from lens.cli._progress import progress
    from recorder import verify_run

    key = chain_key_from(args.key_file)
    store = open_from(args)
    run_id = _resolve(store, args.run)
    total = store.rows("SELECT count(*) FROM _events_all WHERE run_id = ?", [run_id])[0][0]
    with progress("verifying", int(total or 0), "records") as advance:
        result = verify_run(store, run_id, progress=lambda done, _total: advance(done),
                            key=key)
    print(f"{run_id}: {result.summary()}")
    if result.interrupted:
        return INCOMPLETE
    return OK if result.valid else FINDING
