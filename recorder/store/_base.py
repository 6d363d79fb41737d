"""What the read-side parts need of a store, as protocols.

The catalog's :class:`~recorder.store._catalog.Store` builds on the outlines,
the reader, the summaries and the damage guard; they take the store as a
parameter typed by :class:`StoreView` here and never import the ``Store``
class back, so no import runs in a circle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import duckdb
import pyarrow as pa

__all__ = ["CallFacts", "FoundFiles", "OutlineCache", "StoreView"]


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What pricing needs of some outlines, known without a query: the ``models`` their call
    rows name, and the runs ``partial`` there (no ``run.start``: another file may hold the
    start of a call whose answer is here, so their calls are paired from their events)."""

    models: frozenset[str] = frozenset()
    partial: frozenset[str] = frozenset()

    def __or__(self, other: CallFacts) -> CallFacts:
        return CallFacts(self.models | other.models, self.partial | other.partial)


class FoundFiles(Protocol):
    """What one scan of the store's folder found: sealed files by folder, and those skipped."""

    @property
    def events(self) -> Sequence[Path]: ...
    @property
    def blobs(self) -> Sequence[Path]: ...
    @property
    def stats(self) -> Sequence[Path]: ...
    @property
    def chain(self) -> Sequence[Path]: ...
    @property
    def live_events(self) -> Sequence[pa.RecordBatch]: ...
    @property
    def live_event_files(self) -> Sequence[Path]: ...
    @property
    def skipped(self) -> Sequence[Path]: ...
    @property
    def reasons(self) -> Mapping[Path, str]: ...


class OutlineCache(Protocol):
    """The per-file outlines (``recorder.store._outline.Outlines``)."""

    in_use: list[Path]
    rebuilt: dict[Path, str]
    calls: CallFacts

    def tables(self, store: StoreView,
               events: Iterable[Path]) -> tuple[list[Path], list[pa.Table]]: ...
    def owns(self, path: Path) -> bool: ...
    def owns_any(self, paths: Iterable[Path]) -> bool: ...
    def view(self, store: StoreView) -> str: ...
    def discard(self, path: Path, why: str) -> None: ...


@runtime_checkable
class StoreView(Protocol):
    """A read view of one store: its folder, its DuckDB connection and views, its files."""

    outlined: bool
    """Whether the outline view matches the last scan."""

    @property
    def root(self) -> Path: ...
    @property
    def con(self) -> duckdb.DuckDBPyConnection: ...
    @property
    def files(self) -> FoundFiles: ...
    @property
    def damaged(self) -> dict[Path, str]: ...
    @property
    def outlines(self) -> OutlineCache: ...

    def refresh(self) -> None: ...
    def ready(self, query: str) -> str: ...
    def rows(self, query: str, params: Iterable[object] = ()) -> list[tuple[Any, ...]]: ...
    def arrow(self, query: str, params: Iterable[object] = ()) -> pa.Table: ...
    def resolve_run(self, ref: str) -> str: ...
