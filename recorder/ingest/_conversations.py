"""The intake's conversation index: conversation id -> where it stands (its next turn and
where each of its messages came from, by message hash), so a later turn is mapped without
opening the store. Built from the store at start with one query, bounded (least recently
used conversations fall out), and read again — at most once per ``refresh_s`` — only when
a turn arrives with history of a conversation the index does not hold (another process
wrote it, or it fell out)."""

from __future__ import annotations

import logging
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson

from recorder.ingest._mapper import Conversation
from recorder.ingest._pieces import msg_key
from recorder.ingest._request import Call, Msg

__all__ = ["Conversations"]

_log = logging.getLogger("recorder")

_QUERY = """
WITH recent AS (
    SELECT conversation_id, max(start_ns) AS last FROM runs
    WHERE conversation_id IS NOT NULL GROUP BY conversation_id ORDER BY last DESC LIMIT ?)
SELECT r.conversation_id, e.turn, e.type, e.step_id, e.payload
FROM events e JOIN runs r USING (run_id) JOIN recent c USING (conversation_id)
WHERE e.type IN ('run.start', 'llm.end')
ORDER BY c.last, r.conversation_id, e.turn, e.seq
"""
"""Every question and answer of the ``cap`` most recent conversations, in turn order."""


class Conversations:
    """At most ``cap`` conversations, most recently used last."""

    def __init__(self, cap: int = 4096, refresh_s: float = 30.0) -> None:
        self.cap, self.refresh_s = cap, refresh_s
        self._by: OrderedDict[str, Conversation] = OrderedDict()
        self._loaded = float("-inf")
        self.loads = 0

    def __len__(self) -> int:
        return len(self._by)

    def get(self, key: str) -> Conversation | None:
        conv = self._by.get(key)
        if conv is not None:
            self._by.move_to_end(key)
        return conv

    def put(self, key: str, conv: Conversation) -> None:
        self._by[key] = conv
        self._by.move_to_end(key)
        while len(self._by) > self.cap:
            self._by.popitem(last=False)

    def load(self, store: str | Path) -> None:
        """(Re)read the store's most recent conversations (one query); a conversation this
        index holds keeps what it knows when the store knows no more of it."""
        from recorder.store._catalog import open_store
        from recorder.store._reader import blob_texts

        self._loaded, self.loads = time.monotonic(), self.loads + 1
        with open_store(store) as s:
            rows = s.rows(_QUERY, [self.cap])
            payloads = [orjson.loads(p) if p else {} for *_, p in rows]
            texts = blob_texts(s, payloads)
        found: dict[str, Conversation] = {}
        for (key, turn, kind, step, _), payload in zip(rows, payloads, strict=True):
            _learn(found.setdefault(str(key), Conversation()), int(turn), kind, step,
                   payload, texts)
        for key, conv in found.items():
            held = self._by.get(key)
            if held is None or held.turns <= conv.turns:
                self.put(key, conv)

    def earlier(self, store: str | Path, key: str) -> Conversation | None:
        """``key`` as the store holds it, reading the store again only when the last read
        is ``refresh_s`` old (a turn with history of an unknown conversation)."""
        if time.monotonic() - self._loaded >= self.refresh_s:
            try:
                self.load(store)
            except Exception as exc:  # an unreadable store costs the origins, never the trace
                _log.warning("recorder.ingest: conversations not read from the store (%s: %s)",
                             type(exc).__name__, exc)
        return self.get(key)


def _text(value: Any, texts: dict[str, str]) -> str:
    if isinstance(value, dict):
        return texts.get(str(value.get("$blob")), "")
    return value if isinstance(value, str) else ""


def _learn(conv: Conversation, turn: int, kind: str, step: str, payload: dict[str, Any],
           texts: dict[str, str]) -> None:
    """One stored question or answer, as :func:`map_trace` remembers it."""
    tag = f"turn{turn}"
    conv.turns = max(conv.turns, turn + 1)
    if kind == "run.start":
        said = _text(payload.get("user_message"), texts)
        if said:
            conv.origins.setdefault(msg_key(Msg(role="user", content=said)),
                                  sys.intern(f"{tag}:person"))
        return
    calls = tuple(Call(id=str(c.get("id") or ""), name=str(c.get("name") or ""))
                  for c in payload.get("tool_calls") or () if isinstance(c, dict))
    answer = Msg(role="assistant", content=_text(payload.get("content"), texts),
                 tool_calls=calls)
    conv.origins.setdefault(msg_key(answer), sys.intern(f"{tag}:{step}"))
