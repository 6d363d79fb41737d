"""``footprint doctor``'s lines on the intake: raw batches a receiver acknowledged and has
not yet mapped (``recorder.ingest._raw``: a batch stays ``.pending`` until its runs are
written)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["check_intake"]

_SHOWN = 5
"""Pending batches named one by one; the rest are counted."""


def check_intake(store: Store) -> bool:
    """Print the pending raw batches (a running receiver's are in flight, the rest wait for
    the next start); whether none waits for a receiver that is gone."""
    from recorder.ingest._raw import raw_batches, receiver_alive

    pending = list(raw_batches(store.root, pending=True))
    flight = [raw for raw in pending if receiver_alive(raw)]
    left = [raw for raw in pending if not receiver_alive(raw)]
    if flight:
        print(f"intake: {len(flight)} raw batch(es) of a running receiver still being mapped")
    for raw in left[:_SHOWN]:
        print(f"pending  {raw.path}: acknowledged, not yet mapped (its receiver is gone)")
    if len(left) > _SHOWN:
        print(f"pending  {len(left) - _SHOWN} more raw batches ({len(left)} in all)")
    if left:
        print("the next `footprint receive --store STORE` maps the pending raw batches (or "
              "`footprint ingest --remap` maps every raw batch again)")
    return not left
