"""A recorded model request taken apart into pieces that can be removed one by one.

The interface is small on purpose, so any recording that kept the whole
request can feed it: :func:`request_of` reads the canonical request JSON an
``llm.start`` keeps in ``request_ref`` (``model``, ``system``, ``messages``
with ``role``/``content``/``tool_calls``/``tool_call_id``/``tool_name``,
``tools`` with ``name``/``description``/``input_schema``, ``temperature``,
``max_tokens``, ``stop``) and :class:`Part` names the parts of the system
text (a native run's landed pieces; an ingested run's system instructions
and retrieved documents).

Pieces (:class:`Piece`):

* ``system`` — one part of the system text (an injection, the base prompt);
  ``document`` when the part is a retrieved document (flavor ``rag``), in the
  system text or inside a message (a user message's ``Context: … Question: …``:
  the question stays, the document goes);
* ``message`` — one message, with its role (the person's question being
  answered is never a piece: without it there is no question);
* ``exchange`` — a tool call together with its result, so the request stays
  valid (an assistant message left with neither text nor calls goes too);
* ``tool`` — one tool definition.

Identical content is one piece: removing it removes every copy.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from footprint._errors import ConfigError
from footprint.providers import LLMRequest, Message, ToolCall, ToolSpec
from lens.explain._split import Layout, Part, split_text
from lens.playback._stream import clip

__all__ = ["Part", "Piece", "PieceKind", "RecordedRequest", "pieces_of", "request_of"]

PieceKind = Literal["system", "document", "message", "exchange", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One removable piece: where it sits (``at``: part indexes, message indexes, call ids
    or tool names; several when identical content repeats) and what it says."""

    id: str
    kind: PieceKind
    label: str
    text: str
    at: tuple[str, ...]
    flavor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    """The request as recorded, its system text in parts, and its pieces."""

    request: LLMRequest
    layout: Layout
    """The system text in its parts."""
    pieces: tuple[Piece, ...]
    question: int | None
    """The index of the message asked (never removed), when found."""
    inside: Mapping[int, Layout] = field(default_factory=lambda: MappingProxyType({}))
    """Each message holding documents (by index) in its parts."""

    def without(self, removed: Iterable[str]) -> LLMRequest:
        """The request with the pieces ``removed`` (by id) taken out."""
        by_id = {p.id: p for p in self.pieces}
        gone = [by_id[i] for i in removed]
        where = {k: {a for p in gone if p.kind in kinds for a in p.at}
                 for k, kinds in (("part", ("system", "document")), ("msg", ("message",)),
                                  ("call", ("exchange",)), ("tool", ("tool",)))}
        req = self.request
        inner = {a for a in where["part"] if "/" in a}
        system = req.system if not where["part"] - inner else self.layout.text(
            {int(a) for a in where["part"] - inner})
        messages = req.messages
        if inner:
            messages = tuple(replace(m, content=self.inside[i].text(
                {int(a.split("/")[1]) for a in inner if a.split("/")[0] == str(i)}))
                if i in self.inside else m for i, m in enumerate(messages))
        return replace(req, system=system,
                       messages=_messages(messages, where["msg"], where["call"]),
                       tools=tuple(t for t in req.tools if t.name not in where["tool"]))


def _messages(messages: Sequence[Message], drop: set[str],
              calls: set[str]) -> tuple[Message, ...]:
    """The messages kept: a dropped message takes its tool calls' results with it, and a
    dropped call its result (the request stays valid)."""
    calls = calls | {c.id for i, m in enumerate(messages) if str(i) in drop
                     for c in m.tool_calls}
    out: list[Message] = []
    for i, m in enumerate(messages):
        if str(i) in drop or (m.role == "tool" and m.tool_call_id in calls):
            continue
        if m.tool_calls and calls:
            kept = tuple(c for c in m.tool_calls if c.id not in calls)
            if not kept and not m.content:
                continue
            m = replace(m, tool_calls=kept)
        out.append(m)
    return tuple(out)


def _call(data: Mapping[str, Any]) -> ToolCall:
    args = data.get("arguments")
    return ToolCall(id=str(data.get("id") or ""), name=str(data.get("name") or ""),
                    arguments=MappingProxyType(dict(args) if isinstance(args, dict) else {}))


def _message(data: Mapping[str, Any]) -> Message:
    role = data.get("role")
    if role not in ("user", "assistant", "tool", "system"):
        raise ConfigError(f"the recorded request has a message with role {role!r}; "
                          "expected user, assistant, tool or system")
    calls = data.get("tool_calls") or ()
    return Message(role=role, content=str(data.get("content") or ""),
                   tool_calls=tuple(_call(c) for c in calls if isinstance(c, dict)),
                   tool_call_id=data.get("tool_call_id"), tool_name=data.get("tool_name"))


def request_of(request_json: str | None, step: str) -> LLMRequest:
    """The ``LLMRequest`` a recorded request JSON describes (a ``ConfigError`` when the
    recording did not keep it)."""
    if not request_json:
        raise ConfigError(f"{step} kept no request text (redacted or not recorded), so it "
                          "cannot be re-sent; record with request text kept, or drop --resend")
    try:
        body = json.loads(request_json)
    except ValueError as exc:
        raise ConfigError(f"{step}'s recorded request is not JSON ({exc}); it cannot be "
                          "re-sent") from exc
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise ConfigError(f"{step}'s recorded request has no messages list; it cannot be "
                          "re-sent")
    tools = tuple(ToolSpec(name=str(t.get("name")), description=str(t.get("description") or ""),
                           input_schema=MappingProxyType(dict(t.get("input_schema") or {})))
                  for t in body.get("tools") or () if isinstance(t, dict))
    stop = body.get("stop") or ()
    return LLMRequest(model=str(body.get("model") or ""), system=str(body.get("system") or ""),
                      messages=tuple(_message(m) for m in body["messages"]
                                     if isinstance(m, dict)),
                      tools=tools, temperature=body.get("temperature"),
                      max_tokens=body.get("max_tokens"), stop=tuple(str(s) for s in stop))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _group(raw: Sequence[Piece]) -> tuple[Piece, ...]:
    """Identical content (same kind, same text) as one piece with every location."""
    seen: dict[tuple[str, str], Piece] = {}
    for p in raw:
        key = (p.kind, _hash(p.text))
        first = seen.get(key)
        seen[key] = p if first is None else replace(
            first, at=(*first.at, *p.at), label=f"{first.label} (+{len(first.at)} same)")
    return tuple(seen.values())


def _question(messages: Sequence[Message], asked: str | None) -> int | None:
    users = [i for i, m in enumerate(messages) if m.role == "user"
             and (asked is None or m.content == asked)]
    return users[-1] if users else None


def _message_pieces(messages: Sequence[Message], question: int | None) -> list[Piece]:
    out: list[Piece] = []
    for i, m in enumerate(messages):
        if i == question or m.role == "tool" or (m.tool_calls and not m.content):
            continue
        also = " + its tool calls and their results" if m.tool_calls else ""
        out.append(Piece(id=f"message #{i}", kind="message",
                         label=f"message #{i} ({m.role}){also}",
                         text=f"{m.role}: {m.content}", at=(str(i),)))
    for m in messages:
        for c in m.tool_calls:
            result = next((r.content for r in messages if r.role == "tool"
                           and r.tool_call_id == c.id), "")
            out.append(Piece(id=f"call #{c.id}", kind="exchange",
                             label=f"tool call #{c.id} ({c.name}) + its result",
                             text=f"{c.name}({json.dumps(dict(c.arguments), sort_keys=True)})"
                                  f" -> {result}", at=(c.id,), flavor=c.name))
    return out


LARGE = 1000
"""A piece longer than this (characters) that nothing splits is flagged: a cause inside it
can only be named as the whole."""


def _inside_messages(messages: Sequence[Message], docs: Sequence[Part]) -> dict[int, Layout]:
    """Each message that holds recorded documents, in its parts (a document that is the
    whole message is the message's own piece)."""
    out = {}
    for i, m in enumerate(messages):
        held = [d for d in docs if d.text and len(d.text) < len(m.content)
                and d.text in m.content]
        if held and m.role != "assistant":
            out[i] = split_text(m.content, held, gap=f"message #{i}")
    return out


def _doc_pieces(inside: Mapping[int, Layout]) -> list[Piece]:
    return [Piece(id=p.id, label=_part_label(p), kind="document", text=p.text,
                  at=(f"{i}/{j}",), flavor=p.flavor)
            for i, layout in inside.items() for j, p in enumerate(layout.parts)
            if p.flavor == "rag"]


def pieces_of(request: LLMRequest, landed: Sequence[Part], asked: str | None, step: str,
              docs: Sequence[Part] = ()) -> tuple[RecordedRequest, list[str]]:
    """The request's pieces (module doc) and flags about what could not be taken apart:
    ``landed`` are the system text's recorded parts, ``docs`` the documents recorded in the
    messages."""
    layout = split_text(request.system, landed)
    raw = [Piece(id=p.id, label=_part_label(p),
                 kind="document" if p.flavor == "rag" else "system", text=p.text,
                 at=(str(i),), flavor=p.flavor) for i, p in enumerate(layout.parts)]
    question = _question(request.messages, asked)
    flags = [] if question is not None else [
        f"no-question: no user message of {step} matched the run's question; every message "
        "is a piece"]
    inside = _inside_messages(request.messages, docs)
    raw += _doc_pieces(inside)
    raw += _message_pieces(request.messages, question)
    raw += [Piece(id=f"tool {t.name}", kind="tool", label=f"tool definition {t.name!r}",
                  text=f"{t.name}: {t.description}", at=(t.name,)) for t in request.tools]
    rec = RecordedRequest(request=request, layout=layout, pieces=_group(raw),
                          question=question, inside=MappingProxyType(inside))
    return rec, flags + _unsplit(rec, step, [*layout.missing, *_unplaced(docs, inside)])


def _unplaced(docs: Sequence[Part], inside: Mapping[int, Layout]) -> list[Part]:
    placed = {p.text for layout in inside.values() for p in layout.parts}
    return [d for d in docs if d.text not in placed]


def _unsplit(rec: RecordedRequest, step: str, missing: Sequence[Part]) -> list[str]:
    """A flag for each recorded part that is not where it was recorded (it cannot be
    removed), each long piece nothing splits, and a long question with no document marked
    in it (the question is never removed, so what it holds is not tested)."""
    out = [f"unsplit: {_part_label(p)} ({len(p.text):,} chars) was recorded in {step} but "
           "its text is not in the recorded request, so it is not tested" for p in missing]
    inner = {(i, j) for i, lay in rec.inside.items() for j, p in enumerate(lay.parts)
             if p.flavor == "rag"}
    out += [f"unsplit: {p.label} ({len(p.text):,} chars) is one piece (nothing marks parts "
            "inside it): a cause inside it can only be named as the whole"
            for p in rec.pieces if len(p.text) > LARGE and p.kind in ("system", "message")]
    q = rec.question
    if q is not None:
        m = rec.request.messages[q]
        rest = len(m.content) - sum(len(rec.inside[q].parts[j].text) for i, j in inner
                                    if i == q)
        if rest > LARGE:
            out.append(f"unsplit: the question (message #{q}, {rest:,} chars besides its "
                       "marked documents) is never removed, so whatever else it holds is not "
                       "tested")
    return out


def _part_label(p: Part) -> str:
    if p.flavor == "rag":
        return f"document {p.id!r}"
    if p.id.startswith("message #"):
        return p.id
    return f"system {p.id!r}" if not p.id.startswith("system") else p.id


def excerpt(piece: Piece) -> str:
    """A short excerpt of the piece's text."""
    return clip(piece.text, 120)
