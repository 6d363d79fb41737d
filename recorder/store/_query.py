"""``EventQuery``: which rows of one run a reader wants, as SQL the scan can push down.

Every filter is a plain comparison on a stored column (``run_id``, ``seq``,
``iteration``, ``type`` and the hot columns), so DuckDB hands it to the
Parquet scan: row groups whose statistics cannot match are never read, and
only the columns asked for are decoded.
"""

from __future__ import annotations

from dataclasses import dataclass

from footprint._errors import ConfigError
from recorder.write._schemas import EVENT_SCHEMA

__all__ = ["COLUMNS", "EventQuery", "Span"]

COLUMNS: tuple[str, ...] = tuple(EVENT_SCHEMA.names)
"""Every stored event column a query may ask for (``payload`` included)."""

Span = tuple[int, int]
"""An inclusive ``(first, last)`` range of seqs or iterations."""


def _span(name: str, value: Span | None) -> None:
    if value is None:
        return
    ok = (isinstance(value, tuple) and len(value) == 2
          and all(type(v) is int for v in value) and value[0] <= value[1])
    if not ok:
        raise ConfigError(f"EventQuery({name}={value!r}): pass an inclusive (first, last) pair "
                          f"of ints with first <= last, e.g. {name}=(0, 99)")


@dataclass(frozen=True, slots=True, kw_only=True)
class EventQuery:
    """The rows of run ``run_id`` that match every given filter (``None``/empty: no filter).

    ``types``: event type tags (``"llm.end"``) or prefixes ending in ``.``
    (``"skill."``); ``iterations``/``seqs``: inclusive ``(first, last)``;
    ``skill``: rows naming that skill as ``skill_id``, ``from_skill`` or
    ``to_skill``; ``injection``: rows of that ``injection_id``; ``tool``:
    rows of that ``tool_name``.
    """

    run_id: str
    types: tuple[str, ...] = ()
    iterations: Span | None = None
    seqs: Span | None = None
    skill: str | None = None
    injection: str | None = None
    tool: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.run_id, str) or not self.run_id:
            raise ConfigError(f"EventQuery(run_id={self.run_id!r}): pass a full run id "
                              "(Store.resolve_run turns a prefix or 'last' into one)")
        if isinstance(self.types, str) or not all(
                isinstance(t, str) and t for t in self.types):
            raise ConfigError(f"EventQuery(types={self.types!r}): pass a tuple of type tags, "
                              "e.g. types=('llm.end', 'skill.')")
        _span("iterations", self.iterations)
        _span("seqs", self.seqs)
        for name in ("skill", "injection", "tool"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"EventQuery({name}={value!r}): pass a non-empty id or None")

    def where(self) -> tuple[str, list[object]]:
        """The SQL ``WHERE`` condition (no keyword) and its ``?`` parameters."""
        terms: list[str] = ["run_id = ?"]
        params: list[object] = [self.run_id]
        if self.types:
            exact = [t for t in self.types if not t.endswith(".")]
            prefixes = [t for t in self.types if t.endswith(".")]
            ors = ["type IN ?"] if exact else []
            params += [exact] if exact else []
            for prefix in prefixes:
                ors.append("starts_with(type, ?)")
                params.append(prefix)
            terms.append("(" + " OR ".join(ors) + ")")
        for column, span in (("iteration", self.iterations), ("seq", self.seqs)):
            if span is not None:
                terms.append(f"{column} BETWEEN ? AND ?")
                params += list(span)
        if self.skill is not None:
            terms.append("(skill_id = ? OR from_skill = ? OR to_skill = ?)")
            params += [self.skill] * 3
        if self.injection is not None:
            terms.append("injection_id = ?")
            params.append(self.injection)
        if self.tool is not None:
            terms.append("tool_name = ?")
            params.append(self.tool)
        return " AND ".join(terms), params


def columns_sql(columns: tuple[str, ...] | None) -> str:
    """The select list for ``columns`` (``None``: every column), each name checked."""
    if columns is None:
        return ", ".join(COLUMNS)
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown or not columns:
        raise ConfigError(f"columns={columns!r}: {unknown[0] if unknown else 'none'!r} is not "
                          f"an event column; pick from {', '.join(COLUMNS)}")
    return ", ".join(dict.fromkeys(columns))
