"""``footprint doctor``'s lines on compaction (``recorder.store._doctor_compact``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["check_compaction"]


def check_compaction(store: Store, *, repair: bool) -> bool:
    """Print what compaction left (and, with ``repair``, finish it); whether all is well."""
    from recorder.store._doctor_compact import examine_compaction, repair_compaction

    found = examine_compaction(store)
    for item in found.interrupted:
        print(f"interrupted compaction: {item.merged} replaces {len(item.originals)} files "
              "still present (readers skip them; the next compaction deletes them)")
    for path in found.temps:
        print(f"leftover temp file {path} (its writer is gone)")
    for run, n in found.duplicates:
        print(f"duplicates: run {run} has {n} events stored more than once "
              "(`footprint verify` fails on it)")
    if not repair or (not found.interrupted and not found.temps):
        return found.healthy
    finished, temps = repair_compaction(store)
    print(f"finished {len(finished)} deletions of replaced files; removed {len(temps)} "
          "temp files")
    return not found.duplicates and not examine_compaction(store).interrupted
