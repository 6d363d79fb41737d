"""``footprint verify RUN [--key-file FILE]``: exit 0 when the hash chain holds, 1 naming
the first broken seq, 4 when the run's writer died before heading its last batch (a crash:
those records are unsealed, not tampered). With a key (the file's bytes, one trailing
newline dropped; else ``$FOOTPRINT_CHAIN_KEY``) every head must be the HMAC the keyed
writer stored. ``footprint verify --records`` checks every dataset version and
experiment file instead (``recorder.store._record_verify``), and that every
``experiment:NAME`` tag on a run names an experiment the store holds: exit 0 valid, 1
naming every problem."""

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


def _records(store: Store) -> int:
    import dataclasses

    from recorder.store._record_verify import verify_records

    result = verify_records(store.root)
    tagged = sorted({str(t).removeprefix("experiment:") for (t,) in store.rows(
        "SELECT DISTINCT t FROM (SELECT unnest(tags) AS t FROM runs) "
        "WHERE starts_with(t, 'experiment:')")})
    gone = tuple(f"experiment {n}: runs are tagged experiment:{n} but its file is gone "
                 "(deleted)" for n in tagged if n not in result.experiments)
    result = dataclasses.replace(result, problems=result.problems + gone)
    print(f"records: {result.summary()}")
    return OK if result.valid else FINDING


def run(args: argparse.Namespace) -> int:
    from footprint._errors import ConfigError
    from lens.cli._progress import progress
    from recorder import verify_run

    if args.records:
        if args.run is not None:
            raise ConfigError(f"verify {args.run!r} --records: check a run or the records, "
                              "not both; drop RUN or --records")
        return _records(open_from(args))
    if args.run is None:
        raise ConfigError("verify needs RUN (a run id, a prefix, or 'last'), or --records "
                          "to check the dataset and experiment files")
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
