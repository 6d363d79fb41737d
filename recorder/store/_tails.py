"""``chain_tails``: where many runs' chains stand, walked together in a few queries.

Feedback appends a batch of scores to many runs at once (``recorder._feedback``):
each run's chain must be walked and verified first, exactly as
:func:`recorder.store._verify.chain_tail` walks one. One walk per run costs
about six queries, each a scan of the store's files, so a thousand runs cost
thousands of scans. Here the runs' heads, bounds and score heads are read in
one query each, and their rows in one query per chunk of runs (at most
:data:`~recorder.store._verify.WINDOW` rows held at once; a bigger run is read
alone, a window at a time); every run is then walked by the same
:class:`~recorder.store._verify.Walk` and judged by the same checks, so a run's
tail, or the verdict refusing it, is what :func:`chain_tail` gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from footprint._errors import ConfigError
from recorder.store._catalog import Store
from recorder.store._verify import (
    COLUMNS,
    WINDOW,
    ChainTail,
    VerifyResult,
    Walk,
    bad_blobs,
    head_map,
    located,
    tail_of,
    walk_break,
    windows,
)
from recorder.write._chain import chain_key
from recorder.write._schemas import ENVELOPE_NAMES
from recorder.write._scorehead import ScoreHead, read_score_heads

__all__ = ["chain_tails"]

_RUN = ENVELOPE_NAMES.index("run_id")
Bounds = tuple[int, int, int]
"""``(rows, first seq, last seq)`` of a run."""


def chain_tails(store: Store, run_ids: Iterable[str], *,
                key: bytes | str | None = None) -> dict[str, ChainTail | VerifyResult]:
    """Each run's :class:`ChainTail` after a full verifying walk, or the verdict that stops
    anything from extending it (broken, or no record at all), by run id (``key``: the
    chain key of a keyed store; a keyed run without it raises ``ConfigError``)."""
    try:
        secret = chain_key(key, origin="chain_tails(key=…)")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    runs = sorted(set(run_ids))
    if not runs:
        return {}
    found = _heads(store, runs)
    bounds = _bounds(store, runs)
    scored = _score_heads(store)
    out: dict[str, ChainTail | VerifyResult] = {}
    walks: dict[str, Walk] = {}
    for run in runs:
        heads = head_map(run, found.get(run, []), secret)
        if isinstance(heads, VerifyResult):
            out[run] = heads
            continue
        walks[run] = Walk(run, bounds.get(run, (0, 0, 0))[0], heads, secret)
        walks[run].score_at = scored.get(run)
    for run, rows in _rows(store, sorted(walks), bounds):
        walk = walks.get(run)
        broken = None if walk is None else walk.feed(rows)
        if broken is not None:
            out[run] = located(store, broken)
            del walks[run]
    bad = bad_blobs(store, (digest for walk in walks.values() for digest in walk.refs))
    for run, walk in walks.items():
        out[run] = _finish(store, walk, bad)
    return out


def _finish(store: Store, walk: Walk, bad: set[str]) -> ChainTail | VerifyResult:
    broken = walk_break(store, walk, bad)
    if broken is not None:
        return located(store, broken)
    if walk.rows == 0:
        return VerifyResult(run_id=walk.run_id, valid=True, records=0)
    return tail_of(walk)


def _heads(store: Store, runs: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    found: dict[str, list[tuple[Any, ...]]] = {}
    for run, *row in store.rows("SELECT run_id, last_seq, head, segment, format "
                                "FROM _chain_all WHERE run_id IN ?", [runs]):
        found.setdefault(str(run), []).append(tuple(row))
    return found


def _bounds(store: Store, runs: list[str]) -> dict[str, Bounds]:
    return {str(run): (int(n), int(lo), int(hi)) for run, n, lo, hi in store.rows(
        "SELECT run_id, count(*), min(seq), max(seq) FROM _events_all WHERE run_id IN ? "
        "GROUP BY run_id", [runs])}


def _score_heads(store: Store) -> dict[str, ScoreHead]:
    """The store's score heads; none when the file does not read (``footprint doctor``
    names it), as :func:`recorder.store._verify.verify_run` reads them."""
    try:
        return read_score_heads(store.root)
    except (OSError, pa.ArrowException, ValueError):
        return {}


def _rows(store: Store, runs: list[str],
          bounds: dict[str, Bounds]) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """``(run, rows)`` in seq order: all of a run's rows at once, or a window at a time
    for a run bigger than :data:`WINDOW`."""
    chunk: list[str] = []
    held = 0
    for run in [*runs, None]:
        size = bounds.get(run, (0, 0, 0))[0] if run is not None else 0
        if chunk and (run is None or held + size > WINDOW):
            yield from _chunk_rows(store, chunk)
            chunk, held = [], 0
        if run is None or size == 0:
            continue
        if size > WINDOW:
            _, lo, hi = bounds[run]
            yield from ((run, rows) for rows in windows(store, run, lo, hi, WINDOW))
            continue
        chunk.append(run)
        held += size


def _chunk_rows(store: Store, runs: list[str]) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    table = store.arrow(f"SELECT {', '.join(COLUMNS)} FROM _events_all WHERE run_id IN ? "
                        "ORDER BY run_id, seq", [runs])
    rows = list(zip(*(column.to_pylist() for column in table.columns), strict=True))
    start = 0
    for end in range(1, len(rows) + 1):
        if end == len(rows) or rows[end][_RUN] != rows[start][_RUN]:
            yield str(rows[start][_RUN]), rows[start:end]
            start = end
