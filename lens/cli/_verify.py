"""``footprint verify RUN [--key-file FILE]``: exit 0 when the hash chain holds, 1 naming
the first broken seq. With a key (the file's bytes, one trailing newline dropped; else
``$FOOTPRINT_CHAIN_KEY``) every head must be the HMAC the keyed writer stored."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lens.cli._common import open_from

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["run"]


def _resolve(store: Store, ref: str) -> str:
    """The run ``ref`` names; a run whose events are gone (a damaged or deleted file) but
    whose chain heads remain is found by its heads, so verify can name what is missing."""
    from footprint._errors import ConfigError

    try:
        return store.resolve_run(ref)
    except ConfigError:
        found = [r for (r,) in store.rows(
            "SELECT DISTINCT run_id FROM _chain_all WHERE run_id = ? OR "
            "(length(?) > 0 AND starts_with(run_id, ?))", [ref, ref, ref])]
        if len(found) == 1 or ref in found:
            return ref if ref in found else found[0]
        raise


def _key(path: str | None) -> bytes | None:
    """The chain key from ``--key-file`` (one trailing newline dropped) or the environment."""
    import os

    from footprint._errors import ConfigError
    from recorder.write._chain import KEY_ENV

    if path is None:
        text = os.environ.get(KEY_ENV)
        return text.encode("utf-8") if text else None
    try:
        with open(path, "rb") as file:
            data = file.read(1 << 16)
    except OSError as exc:
        raise ConfigError(f"--key-file {path!r}: {exc.strerror or exc}; pass the file that "
                          "holds the chain key") from None
    return data[:-2] if data.endswith(b"\r\n") else data.removesuffix(b"\n")


def run(args: argparse.Namespace) -> int:
    from lens.cli._progress import progress
    from recorder import verify_run

    key = _key(args.key_file)
    store = open_from(args)
    run_id = _resolve(store, args.run)
    total = store.rows("SELECT count(*) FROM _events_all WHERE run_id = ?", [run_id])[0][0]
    with progress("verifying", int(total or 0), "records") as advance:
        result = verify_run(store, run_id, progress=lambda done, _total: advance(done),
                            key=key)
    print(f"{run_id}: {result.summary()}")
    return 0 if result.valid else 1
