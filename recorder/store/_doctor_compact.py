"""What compaction may leave for ``footprint doctor``: interrupted compactions, temp files
whose writer is gone, and events stored twice.

A compactor killed between its rename and its deletions leaves originals
beside the merged file that replaces them (readers skip them; the next
compaction deletes them); a writer or compactor killed mid-write leaves a
temp file no one will rename. Neither costs a reader anything; both are
named and, on repair, finished. An event stored more than once (same run
and seq: an older compaction merged a merged file again with its originals)
makes ``verify`` fail on its run; it is named, never guessed away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recorder.write._compact import finish_compactions
from recorder.write._merged import Interrupted, interrupted, remove_stale_temps, stale_temps

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["CompactionCheckup", "examine_compaction", "repair_compaction"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionCheckup:
    """What :func:`examine_compaction` found."""

    interrupted: tuple[Interrupted, ...]
    temps: tuple[Path, ...]
    """Temp files whose writer is gone (never to be renamed into place)."""
    duplicates: tuple[tuple[str, int], ...]
    """Per run with any: the events stored more than once (same seq)."""

    @property
    def healthy(self) -> bool:
        return not self.interrupted and not self.temps and not self.duplicates


def examine_compaction(store: StoreView) -> CompactionCheckup:
    """Interrupted compactions, dead writers' temp files and duplicate events of ``store``."""
    rows = store.rows("SELECT run_id, count(*) - count(DISTINCT seq) AS twice FROM events "
                      "GROUP BY run_id HAVING twice > 0 ORDER BY run_id")
    return CompactionCheckup(interrupted=tuple(interrupted(store.root)),
                             temps=tuple(stale_temps(store.root)),
                             duplicates=tuple((str(run), int(n)) for run, n in rows))


def repair_compaction(store: StoreView) -> tuple[list[Path], list[Path]]:
    """Finish interrupted compactions and remove dead writers' temp files (nothing while
    another compactor works); the originals deleted and the temps removed."""
    finished, temps = finish_compactions(store.root), remove_stale_temps(store.root)
    if finished:
        store.refresh()
    return finished, temps
