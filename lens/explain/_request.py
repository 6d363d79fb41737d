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
  ``document`` when the part is a retrieved document (flavor ``rag``);
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
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

from footprint._errors import ConfigError
from footprint.providers import LLMRequest, Message, ToolCall, ToolSpec
from lens.playback._stream import clip

__all__ = ["Part", "Piece", "PieceKind", "RecordedRequest", "pieces_of", "request_of"]

PieceKind = Literal["system", "document", "message", "exchange", "tool"]
SEP = "\n\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One part of the system text: its id (an injection id), flavor and text."""

    id: str
    text: str
    flavor: str | None = None


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
    parts: tuple[Part, ...]
    pieces: tuple[Piece, ...]
    question: int | None
    """The index of the message asked (never removed), when found."""

    def without(self, removed: Iterable[str]) -> LLMRequest:
        """The request with the pieces ``removed`` (by id) taken out."""
        by_id = {p.id: p for p in self.pieces}
        gone = [by_id[i] for i in removed]
        where = {k: {a for p in gone if p.kind in kinds for a in p.at}
                 for k, kinds in (("part", ("system", "document")), ("msg", ("message",)),
                                  ("call", ("exchange",)), ("tool", ("tool",)))}
        req = self.request
        system = req.system if not where["part"] else SEP.join(
            p.text for i, p in enumerate(self.parts) if str(i) not in where["part"])
        return replace(req, system=system,
                       messages=_messages(req.messages, where["msg"], where["call"]),
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


def _inside(inner: Part, outer: Part) -> bool:
    return bool(inner.text) and len(inner.text) < len(outer.text) and inner.text in outer.text


def _around(outer: Part, inner: Sequence[Part]) -> list[Part]:
    """``outer`` as the text around the parts it holds (each bit under ``outer``'s id; the
    second and later as ``<id> part <n>``) with those parts in their places."""
    bits: list[str | Part] = []
    pos = 0
    for part in sorted(inner, key=lambda q: outer.text.find(q.text)):
        at = outer.text.find(part.text, pos)
        if at < 0:  # overlaps a part already placed
            continue
        bits += [outer.text[pos:at], part]
        pos = at + len(part.text)
    bits.append(outer.text[pos:])
    out: list[Part] = []
    n = 0
    for bit in bits:
        if isinstance(bit, Part):
            out.append(bit)
            continue
        text = bit.removeprefix(SEP).removesuffix(SEP)
        if text:
            n += 1
            out.append(replace(outer, id=outer.id if n == 1 else f"{outer.id} part {n}",
                               text=text))
    return out


def _unnest(landed: Sequence[Part]) -> list[Part]:
    """The landed parts with every part that holds others (an instruction a foreign agent
    wrote with its retrieved documents inside) taken apart around them, so each document is
    a piece of its own."""
    held = {id(q) for q in landed for p in landed if p is not q and _inside(q, p)}
    out: list[Part] = []
    for part in landed:
        if id(part) in held:
            continue
        inner = [q for q in landed if q is not part and _inside(q, part)]
        out += _around(part, inner) if inner else [part]
    return out


def split_system(system: str, landed: Sequence[Part]) -> tuple[tuple[Part, ...], bool]:
    """The system text as parts: each landed part where its text sits (a part holding other
    landed parts taken apart around them), the text between them as ``system part #i``.
    ``False`` when the parts do not rebuild it exactly (the whole text is then one part)."""
    spans = []
    pos = 0
    for part in _unnest(landed):
        at = system.find(part.text, pos) if part.text else -1
        if at < 0:
            continue
        spans.append((at, part))
        pos = at + len(part.text)
    parts: list[Part] = []
    pos = 0
    for at, part in spans:
        parts += _gap(system[pos:at], len(parts))
        parts.append(part)
        pos = at + len(part.text)
    parts += _gap(system[pos:], len(parts))
    if SEP.join(p.text for p in parts) != system:
        return (Part(id="system", text=system),) if system else (), False
    return tuple(parts), True


def _gap(text: str, index: int) -> list[Part]:
    inner = text.removeprefix(SEP).removesuffix(SEP)
    return [Part(id=f"system part #{index}", text=inner)] if inner else []


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


def pieces_of(request: LLMRequest, landed: Sequence[Part], asked: str | None,
              step: str) -> tuple[RecordedRequest, list[str]]:
    """The request's pieces (module doc) and flags about what could not be taken apart."""
    parts, exact = split_system(request.system, landed)
    flags = [] if exact else [
        f"system-whole: {step}'s system text could not be split into its recorded parts, so "
        "it is one piece"]
    raw = [Piece(id=p.id if p.id != "system" else "system", label=_part_label(p),
                 kind="document" if p.flavor == "rag" else "system", text=p.text,
                 at=(str(i),), flavor=p.flavor) for i, p in enumerate(parts)]
    question = _question(request.messages, asked)
    if question is None:
        flags.append(f"no-question: no user message of {step} matched the run's question; "
                     "every message is a piece")
    raw += _message_pieces(request.messages, question)
    raw += [Piece(id=f"tool {t.name}", kind="tool", label=f"tool definition {t.name!r}",
                  text=f"{t.name}: {t.description}", at=(t.name,)) for t in request.tools]
    return RecordedRequest(request=request, parts=parts, pieces=_group(raw),
                           question=question), flags


def _part_label(p: Part) -> str:
    if p.flavor == "rag":
        return f"document {p.id!r}"
    return f"system {p.id!r}" if not p.id.startswith("system") else p.id


def excerpt(piece: Piece) -> str:
    """A short excerpt of the piece's text."""
    return clip(piece.text, 120)
