"""The one rule that turns a RUN argument into a run id: a full id, a unique prefix, or ``last``.

Every command that takes a run (``show``, ``why``, ``snapshot``, ``replay``,
``feedback``, ``export-otlp``, …) resolves it here, whatever holds the runs: a
store (``Store.resolve_run``), a snapshot folder, or a list of events. Run
ids are UUIDv7, so runs made in the same millisecond share their first 13
characters: an ambiguous prefix is answered with up to three candidates and
the shortest prefix that names each alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint._errors import ConfigError, did_you_mean

__all__ = ["SHOWN", "resolve_ref", "shortest_prefixes"]

SHOWN = 3
"""How many candidates an ambiguous prefix's message names."""

RUNS_HINT = "see `footprint runs` for the ids, or use `last`"
"""What an unknown run's message suggests, unless the caller knows better."""


def shortest_prefixes(ids: Sequence[str], wanted: Sequence[str]) -> dict[str, str]:
    """For each id of ``wanted`` (all in ``ids``), the shortest prefix no other id of ``ids``
    starts with (the whole id when another id extends it: the whole id still names it)."""
    ordered = sorted(set(ids))
    where = {run: i for i, run in enumerate(ordered)}
    out: dict[str, str] = {}
    for run in wanted:
        i = where[run]
        shared = max((_common(run, ordered[j]) for j in (i - 1, i + 1)
                      if 0 <= j < len(ordered)), default=0)
        out[run] = run[:min(shared + 1, len(run))]
    return out


def _common(a: str, b: str) -> int:
    """The length of the longest prefix ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def resolve_ref(ref: str, ids: Sequence[str], *, where: str, last: str | None = None,
                hint: str = RUNS_HINT) -> str:
    """The run id ``ref`` names among ``ids`` (oldest first): ``ref`` itself, the one id it
    is a prefix of, or with ``last`` the newest (``last``: the caller's own newest, if it
    knows better). ``where`` names what holds the runs (``"the store '/x'"``) in errors."""
    if not isinstance(ref, str):
        raise ConfigError(f"run {ref!r}: pass a run id, a unique prefix of one, or 'last'")
    if not ids:
        raise ConfigError(f"no runs in {where}; record one first")
    if ref == "last":
        return last if last is not None else ids[-1]
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)] if ref else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ConfigError(_ambiguous(ref, ids, matches))
    raise ConfigError(f"no run {ref!r} in {where}{did_you_mean(ref, list(ids))}; {hint}")


def _ambiguous(ref: str, ids: Sequence[str], matches: list[str]) -> str:
    """``run prefix '0190' matches 2 runs: '0190…a' (type '0190a'), …; type more characters``."""
    shown = matches[:SHOWN]
    short = shortest_prefixes(ids, shown)
    named = ", ".join(f"{run!r} (type {short[run]!r})" for run in shown)
    more = f" and {len(matches) - SHOWN} more" if len(matches) > SHOWN else ""
    return (f"run prefix {ref!r} matches {len(matches)} runs: {named}{more}; "
            "type more characters")
