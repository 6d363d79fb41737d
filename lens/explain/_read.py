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
from footprint.events import ContextInjected, Event, from_record
from lens.explain._past import Landing, call_of
from recorder.store._catalog import Store
from recorder.store._reader import BLOB_TEXTS, _is_ref, _unblob, matching_texts
from recorder.store._upcast import upcast
from recorder.write._rows import BLOB_KEY, ENVELOPE_NAMES

__all__ = ["PastRead", "read_earlier", "read_past"]

CORE_TYPES = ("run.start", "run.end", "run.error", "llm.start", "tool.end",
              "tool.effect", "skill.rejected", "skill.escalated", "run.source")
_CORE = frozenset(CORE_TYPES)
_DECLARED = frozenset({"run.configured", "skill.graph_declared"})
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
    texts = matching_texts(store.rows(BLOB_TEXTS, [wanted])) if wanted else {}
    out: list[Event] = []
    for row, payload in zip(rows, payloads, strict=True):
        record: dict[str, Any] = dict(zip(ENVELOPE_NAMES, row[:-1], strict=True))
        for key, value in payload.items():
            record[key] = _unblob(value, texts)
        out.append(from_record(upcast(record)))
    return out


def _hot(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    """One scan of the run's hot columns (no payload): what every later choice is made on."""
    return store.rows(
        "SELECT seq, type, step_id, injection_id, flavor, slot, content_hash, admitted_by, "
        "admitted_via, parent_step, iteration, moved_by FROM _events_all WHERE run_id = ? "
        "ORDER BY seq", [run_id])


_SEQ_, _TYPE_, _STEP_, _ADMITTED_BY_, _PARENT_, _ITERATION_, _MOVED_ = 0, 1, 2, 7, 9, 10, 11
"""Positions in a :func:`_hot` row."""


def _calls(hot: Sequence[tuple[Any, ...]], step: str | None) -> tuple[list[int], list[str], int]:
    """Every model call's ``llm.start`` seq and step id, and the explained call's seq."""
    seqs = [int(r[0]) for r in hot if r[1] == "llm.start"]
    steps = [str(r[2]) for r in hot if r[1] == "llm.start"]
    picked = [s for s, st in zip(seqs, steps, strict=True) if st == step]
    return seqs, steps, (picked[-1] if picked else (seqs[-1] if seqs else -1))


def _pieces(hot: Sequence[tuple[Any, ...]], seqs: list[int], steps: list[str],
            explained: int) -> tuple[list[tuple[tuple[Any, ...], str]], dict[tuple[Any, ...], int]]:
    """The prompt pieces landed on the path, each with its call, and one representative
    seq per piece, text and admission (it stands for all its landings)."""
    rows = [r for r in hot if r[_TYPE_] == "context.injected" and r[_SEQ_] < explained]
    placed = [(r, step) for r in rows if (step := call_of(seqs, steps, r[_SEQ_])) is not None]
    keep: dict[tuple[Any, ...], int] = {}
    for r, _step in placed:
        keep.setdefault(r[3:7], r[_SEQ_])
    return placed, keep


def _wanted(hot: Sequence[tuple[Any, ...]], keep: dict[tuple[Any, ...], int],
            placed: Sequence[tuple[tuple[Any, ...], str]], reply_steps: set[str], every: bool,
            explained: int) -> set[int]:
    """Every seq to decode, chosen on the hot columns alone (one read of payloads after).

    The run's calls, tool results, gates and end; the model replies (every one
    when re-runs will serve them, or when a tool result does not name the call
    that chose it, an older recording; else those of ``reply_steps``: choices
    are named by the results, their arguments by the explained request); one
    landing per piece; the declarations of the pieces that landed; the event
    that admitted each piece's last landing, and the cursor's moves (not
    stays, but the stays of the explained iteration). With re-runs (``every``),
    every declaration too: the agent that re-runs is checked against them first.
    """
    orphan = any(r[_TYPE_] == "tool.end" and not r[_PARENT_] for r in hot)
    landed = {r[3] for r, _ in placed if r[3]}
    last: dict[tuple[Any, ...], int] = {}
    for r, _ in placed:
        if r[_ADMITTED_BY_] is not None:
            last[r[3:6]] = int(r[_ADMITTED_BY_])
    at = next((r[_ITERATION_] for r in hot if r[_SEQ_] == explained), -1)
    wanted = set(keep.values()) | set(last.values())
    replies = every or orphan
    for r in hot:
        kind = r[_TYPE_]
        if kind in _CORE:
            wanted.add(r[_SEQ_])
        elif kind == "context.injected":
            continue  # the most common row: its landings are chosen above
        elif (kind == "llm.end" and (replies or r[_STEP_] in reply_steps)) or (
                kind == "injection.declared" and (every or r[3] in landed)) or (
                every and kind in _DECLARED) or (
                kind == "context.evaluated" and r[_MOVED_] not in (None, "none") and (
                r[_MOVED_] != "stay" or r[_ITERATION_] == at)):
            wanted.add(r[_SEQ_])
    return wanted


def read_past(store: Store, run_id: str, step: str | None = None, *,
              every_reply: bool = True) -> PastRead:
    """The rows the why walk of ``run_id`` needs, decoded; the rest counted, not read.

    ``every_reply=False`` (no re-runs to serve from the recording) decodes only
    the model replies the walk itself needs (:func:`_wanted`). One scan of the
    hot columns chooses the rows; one read decodes them.
    """
    hot = _hot(store, run_id)
    seqs, steps, explained = _calls(hot, step)
    if step is not None and step not in steps:
        raise ConfigError(f"step {step!r} is not a model call of this run"
                          f"{did_you_mean(step, steps)}; its model calls: {', '.join(steps)}")
    placed, keep = _pieces(hot, seqs, steps, explained)
    reply_steps = {steps[-1], step or steps[-1]} if steps else set()
    wanted = _wanted(hot, keep, placed, reply_steps, every_reply, explained)
    events = _decode(store, "run_id = ? AND seq IN ?", [run_id, sorted(wanted) or [-1]],
                     keep=lambda seq, key: key != "request_ref" or seq == explained)
    by_seq = {e.seq: e for e in events}
    rep: dict[tuple[Any, ...], ContextInjected] = {
        k: e for k, s in keep.items() if isinstance(e := by_seq.get(s), ContextInjected)}
    landings = [Landing(r[_SEQ_], step, piece, r[_ADMITTED_BY_], r[8])
                for r, step in placed if (piece := rep.get(r[3:7])) is not None]
    return PastRead(events=events, landings=landings, read=len(events), total=len(hot))


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
