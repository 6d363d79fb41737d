"""Which raw batches still hold traces whose runs are not written: a batch is settled (its
``.pending`` suffix dropped) only after every trace it holds is mapped and the recorder has
written what was emitted before — so what a receiver acknowledged is either in the store or
in a pending batch the next start maps again."""

from __future__ import annotations

from pathlib import Path

__all__ = ["Pending"]


class Pending:
    """Raw batches of this intake not yet settled: path -> the traces it still waits for
    (``None`` while the batch is being written and decoded). Not thread-safe: the
    intake's raw lock guards it."""

    def __init__(self) -> None:
        self._open: dict[Path, set[str] | None] = {}

    def __len__(self) -> int:
        return len(self._open)

    def reserve(self, path: Path) -> None:
        self._open[path] = None

    def forget(self, path: Path) -> None:
        """A batch that was never written (the write failed)."""
        self._open.pop(path, None)

    def resolve(self, path: Path, waiting: set[str]) -> None:
        """The batch is decoded: these of its traces are not mapped yet."""
        self._open[path] = waiting

    def mapped(self, trace_id: str, paths: list[Path]) -> None:
        for path in paths:
            waiting = self._open.get(path)
            if waiting:
                waiting.discard(trace_id)

    def ready(self) -> list[Path]:
        """The batches no trace waits on any more (taken off this list)."""
        done = [path for path, waiting in self._open.items() if waiting == set()]
        for path in done:
            del self._open[path]
        return done


_STORED = """
SELECT s.foreign_trace_id, r.last_seq FROM run_sources s JOIN runs r USING (run_id)
WHERE s.foreign_trace_id IS NOT NULL ORDER BY r.start_ns DESC LIMIT ?
"""


def stored_traces(store: str | Path, last: int) -> dict[str, int]:
    """The foreign trace ids of the ``last`` most recent runs the store holds (a directory,
    or a storage URI: its bucket's sealed files), with the last event number written of
    each (what is mapped is what the store holds)."""
    from recorder.store._catalog import open_store

    if isinstance(store, Path) and not (store / "events").is_dir() \
            and not (store / "live").is_dir():
        return {}
    with open_store(store) as s:
        rows = s.rows(_STORED, [last])
    return {str(t): int(n) for t, n in reversed(rows)}
