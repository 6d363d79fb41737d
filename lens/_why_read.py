"""Reading only the answer's causal past from a store, with filters DuckDB pushes down.

The run's model calls and tool results, its gates and end are decoded (a
model request's text only for the explained call: the run's history only
grows, so that request names every result read before it). Prompt pieces
repeat every iteration: their hot columns (seq, slot, injection id, content
hash, admitted_by) are scanned, and one landing per distinct piece, text and
admission is decoded to stand for the others (each landing keeps its own
seq and admission). Only the declarations of pieces that landed are read.
Cursor moves are decoded where they moved (not stays) and where a decoded
piece names one as its admitting event.

``events_read`` counts the rows decoded from their payload; ``events_total``
the run's rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from footprint._errors import ConfigError, did_you_mean
from footprint.events import ContextInjected, Event, ToolEnd, from_record
from lens._why_past import Landing, call_of
from recorder._catalog import Store
from recorder._reader import _is_ref, _unblob
from recorder._rows import BLOB_KEY, ENVELOPE_NAMES
from recorder._upcast import upcast

__all__ = ["PastRead", "read_earlier", "read_past"]

CORE_TYPES = ("run.start", "run.end", "run.error", "llm.start", "tool.end",
              "tool.effect", "skill.rejected", "skill.escalated")
Keep = Callable[[int, str], bool]
_SEQ = ENVELOPE_NAMES.index("seq")


@dataclass(frozen=True, slots=True, kw_only=True)
class PastRead:
    """The events the why walk needs, the pieces on the path, and the rows decoded of all."""

    events: list[Event]
    landings: list[Landing]
    read: int
    total: int


def _all(_seq: int, _key: str) -> bool:
    return True


def _decode(store: Store, where: str, params: Sequence[object], keep: Keep = _all,
            ) -> list[Event]:
    """Typed events for the rows matching ``where``; a blob ``keep`` refuses stays ``None``."""
    rows = store.rows(f"SELECT {', '.join(ENVELOPE_NAMES)}, payload FROM _events_all "
                      f"WHERE {where} ORDER BY seq", list(params))
    payloads = [json.loads(r[-1]) for r in rows]
    for row, p in zip(rows, payloads, strict=True):
        for key in [k for k, v in p.items() if _is_ref(v) and not keep(int(row[_SEQ]), k)]:
            p[key] = None
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


def _hot(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    """One scan of the run's hot columns (no payload): type, seq, step and piece keys."""
    return store.rows(
        "SELECT seq, type, step_id, injection_id, flavor, slot, content_hash, admitted_by, "
        "admitted_via FROM _events_all WHERE run_id = ? ORDER BY seq", [run_id])


def _calls(hot: Sequence[tuple[Any, ...]], step: str | None) -> tuple[list[int], list[str], int]:
    """Every model call's ``llm.start`` seq and step id, and the explained call's seq."""
    seqs = [int(r[0]) for r in hot if r[1] == "llm.start"]
    steps = [str(r[2]) for r in hot if r[1] == "llm.start"]
    picked = [s for s, st in zip(seqs, steps, strict=True) if st == step]
    return seqs, steps, (picked[-1] if picked else (seqs[-1] if seqs else -1))


def _landings(store: Store, run_id: str, hot: Sequence[tuple[Any, ...]], seqs: list[int],
              steps: list[str], explained: int) -> tuple[list[Landing], list[Event], int]:
    rows = [(r[0], *r[3:]) for r in hot if r[1] == "context.injected" and r[0] < explained]
    placed = [(r, call_of(seqs, steps, r[0])) for r in rows]
    keep: dict[tuple[Any, ...], int] = {}
    for r, _step in placed:  # one landing per piece, text and admission: it stands for all
        keep.setdefault((r[1], r[2], r[3], r[4]), r[0])
    decoded = {e.seq: e for e in _decode(
        store, "run_id = ? AND type = 'context.injected' AND seq IN ?",
        [run_id, sorted(set(keep.values()))]) if isinstance(e, ContextInjected)}
    rep = {k: decoded[s] for k, s in keep.items()}
    out = [Landing(r[0], step, rep[(r[1], r[2], r[3], r[4])], r[5], r[6])
           for r, step in placed if step is not None]
    return out, list(decoded.values()), len(decoded)


def _admitting(store: Store, run_id: str, landings: Sequence[Landing], known: set[int],
               explained_iteration: int) -> list[Event]:
    """The events that admitted the last landing of each piece, and the cursor's moves."""
    last: dict[tuple[Any, ...], int] = {}
    for g in landings:
        if g.admitted_by is not None:
            last[(g.piece.injection_id, g.piece.source, g.piece.slot)] = g.admitted_by
    named = sorted(set(last.values()) - known) or [-1]
    return _decode(store, "run_id = ? AND (seq IN ? OR (type = 'context.evaluated' AND "
                   "moved_by IS NOT NULL AND moved_by <> 'none' AND (moved_by <> 'stay' OR "
                   "iteration = ?)))", [run_id, named, explained_iteration])


def _replies(store: Store, run_id: str, hot: Sequence[tuple[Any, ...]], core: list[Event],
             wanted: set[str], every: bool) -> list[Event]:
    """The model replies (``llm.end``) to decode: every one when re-runs will serve them
    (``every``) or a tool result does not name the call that chose it (an older
    recording); else only those of ``wanted`` calls (the explained one and the last):
    tool choices are named by the results, their arguments by the explained request."""
    orphan = any(isinstance(e, ToolEnd) and not e.parent_step for e in core)
    picked = [int(r[0]) for r in hot if r[1] == "llm.end"
              and (every or orphan or str(r[2]) in wanted)]
    return _decode(store, "run_id = ? AND type = 'llm.end' AND seq IN ?",
                   [run_id, picked or [-1]])


def read_past(store: Store, run_id: str, step: str | None = None, *,
              every_reply: bool = True) -> PastRead:
    """The rows the why walk of ``run_id`` needs, decoded; the rest counted, not read.

    ``every_reply=False`` (no re-runs to serve from the recording) decodes only
    the model replies the walk itself needs (:func:`_replies`).
    """
    hot = _hot(store, run_id)
    seqs, steps, explained = _calls(hot, step)
    if step is not None and step not in steps:
        raise ConfigError(f"step {step!r} is not a model call of this run"
                          f"{did_you_mean(step, steps)}; its model calls: {', '.join(steps)}")
    core = _decode(store, "run_id = ? AND type IN ?", [run_id, list(CORE_TYPES)],
                   keep=lambda seq, key: key != "request_ref" or seq == explained)
    core += _replies(store, run_id, hot, core, {steps[-1], step or steps[-1]} if steps else set(),
                     every_reply)
    landings, pieces, decoded = _landings(store, run_id, hot, seqs, steps, explained)
    it = next((e.iteration for e in core if e.seq == explained), -1)
    moves = _admitting(store, run_id, landings, {e.seq for e in core}, it)
    landed = sorted({g.piece.injection_id for g in landings if g.piece.injection_id})
    born = _decode(store, "run_id = ? AND type = 'injection.declared' AND injection_id IN ?",
                   [run_id, landed or [""]])  # the declarations of the pieces that landed
    events = sorted([*core, *pieces, *moves, *born], key=lambda e: e.seq)
    return PastRead(events=events, landings=landings,
                    read=len(core) + decoded + len(moves) + len(born), total=len(hot))


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
