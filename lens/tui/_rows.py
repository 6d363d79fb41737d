"""Every event of a run as one line, straight from the store's hot columns.

Built for 100k+ events: one SQL fetch of small columns, no typed events,
no JSON parsing; a line's text is formatted only when it is painted, and a
filter is one pass over the type column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["EventRows", "parse_filter"]

# (column, label) for the key fields shown after the type, in this order
_FIELDS: tuple[tuple[str, str], ...] = (
    ("skill_id", "skill"), ("from_skill", "from"), ("to_skill", "to"), ("moved_by", "by"),
    ("injection_id", "injection"), ("slot", "slot"), ("flavor", "flavor"),
    ("admitted_via", "via"), ("admitted_by", "admitted_by"), ("tool_name", "tool"),
    ("tool_call_id", "call"), ("model", "model"), ("reason", "reason"),
)
_SQL = (
    "SELECT seq, step_id, type, iteration, "
    + ", ".join(c for c, _ in _FIELDS)
    + " FROM events WHERE run_id = ? ORDER BY seq"
)


def parse_filter(text: str) -> tuple[str, ...]:
    """Type prefixes from ``text``: separated by spaces or commas; empty means all."""
    return tuple(p for p in text.replace(",", " ").split() if p)


class EventRows:
    """A run's events as rows, with a type-prefix filter over them."""

    def __init__(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self._rows = rows
        self._types: list[str] = [str(r[2]) for r in rows]
        self.prefixes: tuple[str, ...] = ()
        self.visible: list[int] = list(range(len(rows)))

    @classmethod
    def load(cls, store: Store, run_id: str) -> EventRows:
        return cls(store.rows(_SQL, [run_id]))

    def __len__(self) -> int:
        return len(self.visible)

    @property
    def total(self) -> int:
        return len(self._rows)

    def filter(self, text: str) -> None:
        """Keep the rows whose type starts with any prefix in ``text`` (all when empty)."""
        prefixes = parse_filter(text)
        self.prefixes = prefixes
        if not prefixes:
            self.visible = list(range(len(self._rows)))
        else:
            self.visible = [i for i, t in enumerate(self._types) if t.startswith(prefixes)]

    def seq(self, index: int) -> int:
        """The ``seq`` of the ``index``-th visible row."""
        return int(self._rows[self.visible[index]][0])

    def type_of(self, index: int) -> str:
        return self._types[self.visible[index]]

    def parts(self, index: int) -> tuple[str, str, str, str]:
        """``(seq, step, type, key fields)`` of the ``index``-th visible row, as text."""
        row = self._rows[self.visible[index]]
        seq, step, kind, iteration = row[0], row[1], row[2], row[3]
        fields = [f"{label}={value}" for (_, label), value in zip(_FIELDS, row[4:], strict=True)
                  if value is not None and value != ""]
        step_text = f"#{iteration} {step or ''}".strip()
        return f"{seq:>7}", f"{step_text:<18}", f"{kind:<24}", " ".join(fields)

    def line(self, index: int) -> str:
        """The ``index``-th visible row as one line."""
        return " ".join(self.parts(index)).rstrip()
