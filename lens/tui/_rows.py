"""A run's events as rows: an index of seq and type in memory, the rest fetched by the page.

Built for a million events: the index is two Arrow columns (seq, and type
dictionary-encoded: a few MB); a filter is one vectorised pass over the
type codes; the key fields of a row are fetched for the rows on screen only
(``missing`` → the reader → ``fill``) and kept in a bounded cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["COLUMNS", "EventRows", "parse_filter"]

# (column, label) for the key fields shown after the type, in this order
_FIELDS: tuple[tuple[str, str], ...] = (
    ("skill_id", "skill"), ("from_skill", "from"), ("to_skill", "to"), ("moved_by", "by"),
    ("injection_id", "injection"), ("slot", "slot"), ("flavor", "flavor"),
    ("admitted_via", "via"), ("admitted_by", "admitted_by"), ("tool_name", "tool"),
    ("tool_call_id", "call"), ("model", "model"), ("reason", "reason"),
)
COLUMNS = "seq, step_id, type, iteration, " + ", ".join(c for c, _ in _FIELDS)
"""The columns of one row, as the reader selects them."""
_CACHE_ROWS = 20_000


def parse_filter(text: str) -> tuple[str, ...]:
    """Type prefixes from ``text``: separated by spaces or commas; empty means all."""
    return tuple(p for p in text.replace(",", " ").split() if p)


class EventRows:
    """A run's events in seq order, with a type-prefix filter over them."""

    def __init__(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Rows already fetched whole (``COLUMNS`` order): a small run, or a test."""
        self._index(pa.array([int(r[0]) for r in rows], pa.int64()),
                    pa.array([str(r[2]) for r in rows], pa.string()).dictionary_encode())
        self._cache: dict[int, tuple[Any, ...]] = {int(r[0]): tuple(r) for r in rows}

    @classmethod
    def from_index(cls, seqs: pa.Array, types: pa.DictionaryArray, *,
                   grouped: bool = False) -> EventRows:
        """Only the index; each row's fields come later through :meth:`fill`.
        ``grouped``: also group the rows by type now (on a worker, so that the first
        filter keystroke does not pay for it)."""
        rows = cls(())
        rows._index(seqs, types)
        if grouped:
            rows._by_type()
        return rows

    def _index(self, seqs: pa.Array, types: pa.DictionaryArray) -> None:
        self._seqs = seqs
        self._codes = types.indices
        self._names: list[str] = [str(n) for n in types.dictionary.to_pylist()]
        self.prefixes: tuple[str, ...] = ()
        self._visible: pa.Array | None = None
        self._groups: dict[int, pa.Array] | None = None

    def __len__(self) -> int:
        return len(self._seqs) if self._visible is None else len(self._visible)

    @property
    def total(self) -> int:
        return len(self._seqs)

    def filter(self, text: str) -> None:
        """Keep the rows whose type starts with any prefix in ``text`` (all when empty)."""
        prefixes = parse_filter(text)
        self.prefixes = prefixes
        if not prefixes:
            self._visible = None
            return
        codes = [i for i, name in enumerate(self._names) if name.startswith(prefixes)]
        groups = self._by_type()
        parts = [groups[c] for c in codes if c in groups]
        if not parts:
            self._visible = pa.array([], pa.uint64())
        elif len(parts) == 1:
            self._visible = parts[0]
        else:  # several types: their positions, merged back into seq order
            merged = pa.concat_arrays(parts)
            self._visible = merged.take(pc.array_sort_indices(merged))

    def _by_type(self) -> dict[int, pa.Array]:
        """Per type code, the positions of its rows in seq order: computed once per run
        (one stable sort), so a filter keystroke only picks the groups it names."""
        if self._groups is None:
            order = pc.array_sort_indices(self._codes)
            codes = self._codes.take(order)
            bounds = pc.run_end_encode(codes)
            ends = bounds.run_ends.to_pylist()
            values = bounds.values.to_pylist()
            groups: dict[int, pa.Array] = {}
            start = 0
            for code, end in zip(values, ends, strict=True):
                groups[int(code)] = order.slice(start, end - start)
                start = end
            self._groups = groups
        return self._groups

    def filtered(self, text: str) -> EventRows:
        """A second view of the same rows (and the same fetched fields), filtered by ``text``."""
        view = EventRows.__new__(EventRows)
        view._seqs, view._codes, view._names = self._seqs, self._codes, self._names
        view._cache, view._groups = self._cache, self._by_type()
        view.filter(text)
        return view

    def _position(self, index: int) -> int:
        return index if self._visible is None else int(self._visible[index].as_py())

    def seq(self, index: int) -> int:
        """The ``seq`` of the ``index``-th visible row."""
        return int(self._seqs[self._position(index)].as_py())

    def type_of(self, index: int) -> str:
        return self._names[int(self._codes[self._position(index)].as_py())]

    def missing(self, first: int, last: int) -> list[int]:
        """The seqs of visible rows ``first..last`` whose fields are not fetched yet."""
        last = min(last, len(self) - 1)
        seqs = [self.seq(i) for i in range(max(0, first), last + 1)]
        return [s for s in seqs if s not in self._cache]

    def fill(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Fetched rows (``COLUMNS`` order); the oldest go when the cache is full."""
        if len(self._cache) + len(rows) > _CACHE_ROWS:
            for key in list(self._cache)[: len(rows) + _CACHE_ROWS // 4]:
                del self._cache[key]
        for row in rows:
            self._cache[int(row[0])] = tuple(row)

    def parts(self, index: int) -> tuple[str, str, str, str] | None:
        """``(seq, step, type, key fields)`` of the ``index``-th visible row; ``None``: not here."""
        row = self._cache.get(self.seq(index))
        if row is None:
            return None
        seq, step, kind, iteration = row[0], row[1], row[2], row[3]
        fields = [f"{label}={value}" for (_, label), value in zip(_FIELDS, row[4:], strict=True)
                  if value is not None and value != ""]
        step_text = f"#{iteration} {step or ''}".strip()
        return f"{seq:>7}", f"{step_text:<18}", f"{kind:<24}", " ".join(fields)

    def line(self, index: int) -> str | None:
        """The ``index``-th visible row as one line (``None`` while not fetched)."""
        parts = self.parts(index)
        return None if parts is None else " ".join(parts).rstrip()
