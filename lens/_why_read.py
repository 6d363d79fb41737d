"""Reading only the answer's causal past from a store, with filters DuckDB pushes down.

The run's model calls, tool calls, gates, declarations and ends are read in
full (few rows). Prompt pieces repeat every iteration: their hot columns
(seq, iteration, slot, injection id, content hash, admitted_by) are scanned,
and only one landing per distinct piece — plus every piece of the explained
call — is decoded; the other landings are the same piece, re-stamped with
their own envelope. Cursor moves are decoded where they moved (not stays),
plus those the decoded pieces name as their admitting event.

``events_read`` counts the rows decoded from their payload; ``events_total``
the run's rows. :func:`read_past` is the one function to swap for the
recorder's paged reader when it lands.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from footprint.events import ContextInjected, Event, from_record
from recorder._catalog import Store, _is_ref, _unblob
from recorder._rows import BLOB_KEY, ENVELOPE_NAMES
from recorder._upcast import upcast

__all__ = ["PastRead", "read_earlier", "read_past"]

CORE_TYPES = ("run.start", "run.end", "run.error", "llm.start", "llm.end", "tool.start",
              "tool.end", "tool.effect", "skill.rejected", "skill.escalated",
              "injection.declared")


@dataclass(frozen=True, slots=True, kw_only=True)
class PastRead:
    """The events the why walk needs, and how many rows were decoded out of how many."""

    events: list[Event]
    read: int
    total: int


def _decode(store: Store, where: str, params: Sequence[object]) -> list[Event]:
    rows = store.rows(f"SELECT {', '.join(ENVELOPE_NAMES)}, payload FROM _events_all "
                      f"WHERE {where} ORDER BY seq", list(params))
    payloads = [json.loads(r[-1]) for r in rows]
    wanted = sorted({v[BLOB_KEY] for p in payloads for v in p.values() if _is_ref(v)})
    texts = {str(h): str(t) for h, t in store.rows(
        "SELECT hash, text FROM blobs WHERE hash IN ?", [wanted])} if wanted else {}
    out: list[Event] = []
    for row, payload in zip(rows, payloads, strict=True):
        record: dict[str, Any] = dict(zip(ENVELOPE_NAMES, row[:-1], strict=True))
        for key, value in payload.items():
            record[key] = _unblob(value, texts)
        out.append(from_record(upcast(record)))
    return out


def _windows(core: Sequence[Event]) -> list[tuple[int, int, str]]:
    starts = sorted((e.seq, e.step_id) for e in core if e.type == "llm.start")
    out, lo = [], -1
    for seq, step in starts:
        out.append((lo, seq, step))
        lo = seq
    return out


def _pieces(store: Store, run_id: str, core: Sequence[Event],
            explained: str | None) -> tuple[list[Event], int]:
    rows = store.rows(
        "SELECT seq, iteration, step_id, injection_id, flavor, slot, content_hash, admitted_by, "
        "admitted_via FROM _events_all WHERE run_id = ? AND type = 'context.injected' "
        "ORDER BY seq", [run_id])
    windows = _windows(core)
    last_step = explained or (windows[-1][2] if windows else None)
    keep: set[int] = set()
    first: dict[tuple[Any, ...], int] = {}
    group_of: dict[int, tuple[Any, ...]] = {}
    for seq, _it, _st, iid, flavor, slot, chash, _by, _via in rows:
        key = (iid, flavor, slot, chash)
        group_of[seq] = key
        first.setdefault(key, seq)
        call = next((s for lo, hi, s in windows if lo < seq < hi), None)
        if call == last_step:
            keep.add(seq)
    keep |= set(first.values())
    decoded = {e.seq: e for e in _decode(
        store, "run_id = ? AND type = 'context.injected' AND seq IN ?", [run_id, sorted(keep)])}
    reps = {group_of[s]: e for s, e in decoded.items()}
    out: list[Event] = []
    for seq, it, st, _iid, _fl, _sl, _ch, by, via in rows:
        e = decoded.get(seq)
        if e is None:
            rep = reps[group_of[seq]]
            assert isinstance(rep, ContextInjected)
            e = dataclasses.replace(rep, seq=seq, iteration=it, step_id=st, admitted_by=by,
                                    admitted_via=via)
        out.append(e)
    return out, len(decoded)


def _moves(store: Store, run_id: str, pieces: Sequence[Event]) -> list[Event]:
    named = sorted({p.admitted_by for p in pieces
                    if isinstance(p, ContextInjected) and p.admitted_by is not None})
    return _decode(store, "run_id = ? AND type = 'context.evaluated' AND (seq IN ? OR "
                   "(moved_by IS NOT NULL AND moved_by NOT IN ('stay', 'none')))",
                   [run_id, named or [-1]])


def read_past(store: Store, run_id: str, step: str | None = None) -> PastRead:
    """The rows the why walk of ``run_id`` needs, decoded; the rest counted, not read."""
    total = int(store.rows("SELECT count(*) FROM _events_all WHERE run_id = ?", [run_id])[0][0])
    core = _decode(store, "run_id = ? AND type IN ?", [run_id, list(CORE_TYPES)])
    pieces, decoded = _pieces(store, run_id, core, step)
    moves = _moves(store, run_id, pieces)
    stays = _decode(store, "run_id = ? AND type = 'context.evaluated' AND moved_by = 'stay' "
                    "AND seq = (SELECT max(seq) FROM _events_all WHERE run_id = ? AND "
                    "type = 'context.evaluated')", [run_id, run_id])
    known = {e.seq for e in moves}
    events = sorted([*core, *pieces, *moves, *(s for s in stays if s.seq not in known)],
                    key=lambda e: e.seq)
    return PastRead(events=events, read=len(core) + decoded + len(moves) + len(stays),
                    total=total)


def read_earlier(store: Store, conversation_id: str | None, turn: int) -> list[Event]:
    """The person messages, model replies and tool results of a conversation's earlier turns."""
    if conversation_id is None or turn == 0:
        return []
    rows = store.rows("SELECT run_id FROM _events_all WHERE type = 'run.start' AND turn < ? AND "
                      "json_extract_string(payload, '$.conversation_id') = ?",
                      [turn, conversation_id])
    ids = [str(r[0]) for r in rows]
    if not ids:
        return []
    return _decode(store, "run_id IN ? AND type IN ('run.start', 'llm.end', 'tool.end')", [ids])
