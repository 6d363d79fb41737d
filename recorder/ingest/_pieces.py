"""One foreign model call's request as footprint records it: the canonical request JSON
(``llm.start.request_ref``) and one ``context.injected`` piece per system instruction,
retrieved document, message and tool definition, each with a stable id and a hash."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import orjson

from footprint.agent._wire import request_json
from footprint.events import ContextInjected, summarize_content
from footprint.providers import LLMRequest, Message, ToolCall, ToolSpec
from recorder.ingest._layout import documents_in, sections_of
from recorder.ingest._make import ENVELOPE, Envelope, maker
from recorder.ingest._request import ChatRequest, Doc, Msg
from recorder.write._extract import text_sha256 as sha

__all__ = ["Piece", "msg_key", "piece_events", "piece_reason", "sha", "wire_of",
           "wire_reference"]

_injected = maker(ContextInjected, ENVELOPE)
_SOURCES = {"user": "user", "assistant": "assistant", "tool": "tool-result"}
_TRUNCATED = "; TRUNCATED by the emitter"
_SUMMARY_SCAN = 2000  # a summary is one short line: fold only the start of a long text


@functools.lru_cache(maxsize=4096)
def _digest(text: str) -> tuple[str, str]:
    """A piece text's hash and summary: a history message, the system text and the tool
    list repeat in every later call of a trace, so each is worked out once."""
    return sha(text), summarize_content(text[:_SUMMARY_SCAN])


@functools.lru_cache(maxsize=256)
def piece_reason(step: str, framework: str) -> str:
    """Why each piece of the request of ``step`` is there, as far as the trace tells."""
    return (f"in the request of {step} as {framework} recorded it; "
            "the trace does not say why it was admitted")


def msg_key(m: Msg) -> int:
    """What identifies a message across calls: role, text and the calls it made, as a
    hash of this process (the conversation index is rebuilt from the store at start, never
    written: 64 bits, not the text, and no SHA-256 per history message of every call)."""
    if not m.tool_calls:
        return hash((m.role, m.content, m.tool_call_id))
    return hash((m.role, m.content, tuple((c.id, c.name) for c in m.tool_calls),
                 m.tool_call_id))


def _message(m: Msg) -> Message:
    return Message(role=m.role, content=m.content,
                   tool_calls=tuple(ToolCall(id=c.id, name=c.name, arguments=c.arguments)
                                    for c in m.tool_calls),
                   tool_call_id=m.tool_call_id, tool_name=m.tool_name)


def wire_reference(req: ChatRequest) -> str:
    """:func:`wire_of` the long way: footprint's ``LLMRequest`` and ``request_json``."""
    request = LLMRequest(
        model=req.model, system="\n\n".join(req.system),
        messages=tuple(_message(m) for m in req.messages),
        tools=tuple(ToolSpec(name=t.name, description=t.description,
                             input_schema=t.parameters) for t in req.tools),
        temperature=req.temperature, max_tokens=req.max_tokens)
    return request_json(request)


class _Inexact(Exception):
    """A value ``orjson`` might spell otherwise than the standard library."""


_INF = float("inf")


def _plain(value: Any) -> Any:
    """``json_safe`` of the reference path, for the values ``orjson`` spells byte for byte
    as ``json.dumps`` does; :class:`_Inexact` for any other (a float ``repr`` writes with a
    negative exponent, NaN, infinities, subclasses of the JSON types)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if value != value or value in (_INF, -_INF) or 0 < abs(value) < 1e-4:
            raise _Inexact
        return value
    if kind is dict or kind is MappingProxyType or isinstance(value, Mapping):
        return {k if type(k) is str else str(k): _plain(v) for k, v in value.items()}
    if kind is list or kind is tuple or kind is set or kind is frozenset:
        return [_plain(v) for v in value]
    raise _Inexact


def _wire_message(m: Msg) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": _plain(c.arguments)}
                             for c in m.tool_calls]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    if m.tool_name is not None:
        if type(m.tool_name) is not str:
            raise _Inexact
        out["tool_name"] = m.tool_name
    return out


def wire_of(req: ChatRequest) -> str:
    """The request as footprint's canonical request JSON (as a native ``llm.start`` holds
    it): the system instructions joined by blank lines, every message, every tool.

    Spelled by ``orjson`` from plain data, the same text as :func:`wire_reference`
    (which any value ``orjson`` might spell otherwise falls back to)."""
    try:
        body = {"model": req.model, "system": "\n\n".join(req.system),
                "messages": [_wire_message(m) for m in req.messages],
                "tools": [{"name": t.name, "description": t.description,
                           "input_schema": _plain(t.parameters)} for t in req.tools],
                "temperature": _plain(req.temperature), "max_tokens": _plain(req.max_tokens)}
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except (_Inexact, orjson.JSONEncodeError, TypeError):
        return wire_reference(req)


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One ``context.injected`` piece of a foreign request (fields as the event names them)."""

    slot: str
    source: str
    injection_id: str
    position: int
    text: str
    as_role: str | None
    admitted_via: str
    truncated: bool = False
    retrieval_score: float | None = None
    rank_position: int | None = None

    def event(self, envelope: Envelope, reason: str) -> ContextInjected:
        """The ``context.injected`` event of this piece in a request (``reason``: the
        :func:`piece_reason` of that call)."""
        if self.truncated:
            reason += _TRUNCATED
        digest, summary = _digest(self.text)
        return _injected(envelope, slot=self.slot, source=self.source, content_hash=digest,
                         content_summary=summary, reason=reason,
                         admitted_via=self.admitted_via, injection_id=self.injection_id,
                         position=self.position, as_role=self.as_role, raw_content=self.text,
                         retrieval_score=self.retrieval_score,
                         rank_position=self.rank_position)


_piece = maker(Piece)


def _doc_piece(text: str, doc_id: str | None, slot: str, position: int,
               found: Mapping[str, tuple[int, Doc]]) -> Piece:
    rank, doc = found.get(doc_id or "", (None, None))
    return _piece(slot=slot, source="rag", injection_id=f"doc:{doc_id or sha(text)[:12]}",
                  position=position, text=text, as_role=None, admitted_via="retrieval",
                  retrieval_score=doc.score if doc is not None else None, rank_position=rank)


def _known(docs: Sequence[Doc]) -> list[tuple[str, str]]:
    """Each retrieved document's text and id (its hash where the retriever named none)."""
    return [(d.content, d.doc_id or sha(d.content)[:12]) for d in docs]


def _ranked(docs: Sequence[Doc]) -> dict[str, tuple[int, Doc]]:
    return {doc_id: (rank, d) for rank, (d, (_, doc_id)) in enumerate(zip(docs, _known(docs),
                                                                         strict=True))}


def _system(req: ChatRequest, docs: Sequence[Doc], placed: set[str]) -> list[Piece]:
    """Each system instruction as its paragraphs, and each document in it as its own piece
    (the layout's block around it: :mod:`recorder.ingest._layout`)."""
    if docs:
        return _system_pieces(req.system, docs, placed)
    pieces, ids = _system_alone(req.system)
    placed.update(ids)
    return list(pieces)


@functools.lru_cache(maxsize=256)
def _system_alone(system: tuple[str, ...]) -> tuple[tuple[Piece, ...], tuple[str, ...]]:
    """:func:`_system_pieces` of a call no retriever fed (the pieces and the documents
    placed), worked out once per system text: every call of an agent sends the same one
    (pieces are frozen: shared between the calls)."""
    placed: set[str] = set()
    pieces = tuple(_system_pieces(system, (), placed))
    return pieces, tuple(placed)


def _system_pieces(system: tuple[str, ...], docs: Sequence[Doc],
                   placed: set[str]) -> list[Piece]:
    out: list[Piece] = []
    found = _ranked(docs)
    for text in system:
        pos = 0
        found_docs = documents_in(text, _known(docs))
        for span in [*found_docs, None]:
            stop = span.start if span is not None else len(text)
            sections = [text[s.start:s.end] for s in sections_of(text, pos, stop)]
            if not found_docs and len(sections) == 1:
                sections = [text]  # one instruction, as it was written
            out += [_piece(slot="system-prompt", source="base",
                           injection_id=f"system:{_digest(t)[0][:12]}", position=len(out),
                           text=t, as_role="system", admitted_via="baseline")
                    for t in sections]
            if span is None:
                break
            piece = _doc_piece(text[span.start:span.end], span.doc_id, "system-prompt",
                               len(out), found)
            placed.add(piece.injection_id)
            out.append(piece)
            pos = span.end
    return out


def _message_docs(req: ChatRequest, docs: Sequence[Doc], placed: set[str],
                  start: int) -> list[Piece]:
    """The documents inside the messages (a user message's ``Context: … Question: …``), and
    each retrieved document found nowhere (it cannot be removed; ``why`` says so)."""
    found = _ranked(docs)
    known = _known(docs)
    out: list[Piece] = []
    for m in req.messages:
        if m.role not in ("user", "tool"):
            continue
        for span in documents_in(m.content, known):
            piece = _doc_piece(m.content[span.start:span.end], span.doc_id, "messages",
                               start + len(out), found)
            if piece.injection_id not in placed:
                placed.add(piece.injection_id)
                out.append(piece)
    for content, doc_id in known:
        if f"doc:{doc_id}" not in placed:
            out.append(_doc_piece(content, doc_id, "messages", start + len(out), found))
    return out


def _message_events(req: ChatRequest, origins: Mapping[int, str], person: int | None,
                    envelope: Envelope, reason: str) -> list[ContextInjected]:
    """Each message of the request as its ``context.injected`` event, the ``i``-th with
    ``envelope``'s seq plus ``i``: what :meth:`Piece.event` makes of its piece, without a
    piece (a call's history is most of its pieces, and all of them again in a later call)."""
    run, seq, ts, turn, iteration, step, trace, span = envelope
    out = []
    for i, m in enumerate(req.messages):
        if m.role == "tool":
            origin = f"tool#{m.tool_call_id}" if m.tool_call_id else f"history#{i}"
        elif i == person:
            origin = "person"
        else:
            known = origins.get(msg_key(m)) if origins else None
            origin = known or f"history#{i}"
        text = m.content or "; ".join(f"{c.name}({dict(c.arguments)})" for c in m.tool_calls)
        digest, summary = _digest(text)
        out.append(_injected(
            (run, seq + i, ts, turn, iteration, step, trace, span), slot="messages",
            source=_SOURCES.get(m.role, "user"), content_hash=digest, content_summary=summary,
            reason=reason + _TRUNCATED if m.truncated else reason, admitted_via="delivered",
            injection_id=origin, position=i, as_role=m.role, raw_content=text,
            retrieval_score=None, rank_position=None))
    return out


def person_index(req: ChatRequest) -> int | None:
    """The index of this turn's message from the person: the last user message."""
    found = [i for i, m in enumerate(req.messages) if m.role == "user"]
    return found[-1] if found else None


def piece_events(req: ChatRequest, docs: Sequence[Doc], origins: Mapping[int, str],
                 person: int | None, envelope: Envelope, reason: str) -> list[ContextInjected]:
    """Every piece of one request as its ``context.injected`` event, in slot order (system
    prompt, messages, the documents in them, tools): the ``j``-th with ``envelope``'s seq
    plus ``j`` (``reason``: the call's :func:`piece_reason`)."""
    tools = [_piece(slot="tools", source="registry", injection_id=f"tool:{t.name}", position=i,
                   text=f"{t.name}: {t.description}", as_role=None, admitted_via="baseline")
             for i, t in enumerate(req.tools)]
    placed: set[str] = set()
    system = _system(req, docs, placed)
    rest = _message_docs(req, docs, placed, len(req.messages)) + tools
    seq = envelope[1]
    out = [p.event(_moved(envelope, seq + j), reason) for j, p in enumerate(system)]
    out += _message_events(req, origins, person, _moved(envelope, seq + len(out)), reason)
    start = seq + len(out)
    return out + [p.event(_moved(envelope, start + j), reason) for j, p in enumerate(rest)]


def _moved(envelope: Envelope, seq: int) -> Envelope:
    """``envelope`` with another seq."""
    return (envelope[0], seq, *envelope[2:])
