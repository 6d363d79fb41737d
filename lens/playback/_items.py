"""Dataset items from recorded runs: the input a run was given, and what was expected.

An item holds the person's message of the run and, for a later turn of a
conversation, the turns before it as messages (each earlier turn's message and
its answer; :func:`lens.playback._conversation.conversation_of` finds them).
Its labels are the run's latest scores (a label, else the value as text); with
``expected_from`` the newest score of that name gives the expected answer (its
label, else its comment).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from footprint._errors import ConfigError
from footprint.events import RunEnd
from lens.playback._conversation import conversation_of
from recorder._datasets import DatasetItem

__all__ = ["item_id_of", "items_from_runs"]


def item_id_of(run_id: str) -> str:
    """The id of the item taken from ``run_id`` (the same run gives the same item)."""
    return "it-" + hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:10]


def _starts(store: Any, run_ids: list[str]) -> dict[str, tuple[int, str]]:
    rows = store.rows("SELECT run_id, turn, json_extract_string(payload, '$.user_message') "
                      "FROM _events_all WHERE type = 'run.start' AND run_id IN ?", [run_ids])
    return {str(r[0]): (int(r[1] or 0), str(r[2] or "")) for r in rows}


def _scores(store: Any, run_ids: list[str]) -> dict[str, list[tuple[str, Any, Any, Any]]]:
    """``run -> [(name, value, label, comment)]``, oldest first."""
    out: dict[str, list[tuple[str, Any, Any, Any]]] = {}
    for run_id, name, value, label, comment in store.rows(
            "SELECT run_id, name, value, label, comment FROM scores WHERE run_id IN ? "
            "ORDER BY run_id, seq", [run_ids]):
        out.setdefault(str(run_id), []).append((name, value, label, comment))
    return out


def _labels(scores: list[tuple[str, Any, Any, Any]]) -> dict[str, str] | None:
    labels: dict[str, str] = {}
    for name, value, label, _ in scores:
        labels[name] = label if label is not None else f"{value:g}"
    return labels or None


def _expected(scores: list[tuple[str, Any, Any, Any]], name: str | None) -> str | None:
    said = [s for s in scores if s[0] == name]
    if not said:
        return None
    _, _, label, comment = said[-1]
    return str(label) if label is not None else None if comment is None else str(comment)


def _history(store: Any, run_id: str) -> tuple[Mapping[str, str], ...]:
    messages: list[Mapping[str, str]] = []
    for turn in conversation_of(store, run_id)[:-1]:
        messages.append({"role": "user", "content": turn.user_message})
        end = next((e for e in turn.events if isinstance(e, RunEnd)), None)
        if end is not None:
            messages.append({"role": "assistant", "content": end.final_content})
    return tuple(messages)


def items_from_runs(store: Any, run_ids: list[str], *, expected: str | None = None,
                    expected_from: str | None = None) -> list[DatasetItem]:
    """One item per run of ``run_ids`` (full ids of ``store``), in order. ``expected``:
    the same expected answer for all; ``expected_from``: a score name (see above)."""
    starts = _starts(store, run_ids)
    missing = [run_id for run_id in run_ids if run_id not in starts]
    if missing:
        raise ConfigError(f"run {missing[0]!r} has no run.start (no message to try again); "
                          "leave it out (see `footprint show` of it)")
    scores = _scores(store, run_ids)
    items = []
    for run_id in run_ids:
        turn, message = starts[run_id]
        said = scores.get(run_id, [])
        items.append(DatasetItem(
            item_id=item_id_of(run_id), message=message,
            history=_history(store, run_id) if turn > 0 else (),
            expected=expected if expected is not None else _expected(said, expected_from),
            labels=_labels(said), source_run=run_id, source_turn=turn))
    return items
