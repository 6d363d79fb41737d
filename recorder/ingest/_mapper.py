"""One foreign trace to one run's events: the agent span names the run, each chat span
becomes an iteration (pieces, ``llm.start``, ``llm.end``), each tool span a
``tool.start``/``tool.end``; an error ends the run with ``run.error``."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from footprint.events import (
    EventBase,
    IterationEnd,
    IterationStart,
    LLMEnd,
    LLMStart,
    RunConfigured,
    RunEnd,
    RunFailed,
    RunSource,
    RunStart,
    ToolEnd,
    ToolStart,
)
from footprint.providers import StopReason, ToolCall
from recorder.ingest._dialects import (
    agent_name,
    chat_request,
    conversation_of,
    kind_of,
    merge_logs,
    tool_info,
)
from recorder.ingest._flat import indexed
from recorder.ingest._genai import parse_json
from recorder.ingest._make import ENVELOPE, Envelope, maker
from recorder.ingest._pieces import (
    msg_key,
    person_index,
    piece_events,
    piece_reason,
    sha,
    wire_of,
)
from recorder.ingest._request import ChatRequest, Doc, arguments_of, text_of
from recorder.ingest._spans import ForeignLog, ForeignSpan

__all__ = ["UNKNOWN", "Conversation", "MappedRun", "map_trace", "run_id_for"]

UNKNOWN = (
    "why each piece was admitted: the trace records what the model saw, not why",
    "the exact wire request: it is rebuilt from the span's attributes",
    "the agent's decisions between model calls (routing, skills, injections)",
)
_STOP: dict[str, StopReason] = {
    "stop": "end_turn", "end_turn": "end_turn", "completed": "end_turn",
    "tool_calls": "tool_use", "tool_call": "tool_use", "tool_use": "tool_use",
    "function_call": "tool_use", "length": "max_tokens", "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence", "error": "error",
}


def run_id_for(trace_id: str, start_ns: int) -> str:
    """A time-sortable id (UUIDv7 layout) fixed by the trace: a remap finds the same run."""
    ms = max(start_ns // 1_000_000, 0) & ((1 << 48) - 1)
    rand = int.from_bytes(hashlib.sha256(f"footprint.ingest\x1f{trace_id}".encode()).digest()[
        :10], "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64 | (0b10 << 62) | (
        rand & ((1 << 62) - 1))
    h = f"{value:032x}"  # as str(uuid.UUID(int=value)) spells it
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(slots=True)
class Conversation:
    """Across the traces of one conversation: the next turn, and where each message
    already seen came from (``turn<t>:llm#k``, ``turn<t>:person``)."""

    turns: int = 0
    origins: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class MappedRun:
    run_id: str
    events: tuple[EventBase, ...]
    mapped_spans: int
    empty_chats: int


class _Out:
    """Events of one run, numbered in emit order, times never going back."""

    def __init__(self, run_id: str, turn: int, trace_id: str) -> None:
        self.run_id, self.turn, self.trace_id = run_id, turn, trace_id
        self.events: list[EventBase] = []
        self.add: Callable[[EventBase], None] = self.events.append
        """Add the event made with the last :meth:`env`."""
        self.ts = 0

    def env(self, step: str, iteration: int, ts: int, span: str | None = None) -> Envelope:
        """The envelope of the next event (``ENVELOPE`` order): pass it to its maker, then
        :attr:`add` the event before asking for another."""
        if ts > self.ts:
            self.ts = ts
        return (self.run_id, len(self.events), self.ts, self.turn, iteration, step,
                self.trace_id, span)


_iteration_start, _iteration_end = maker(IterationStart, ENVELOPE), maker(IterationEnd, ENVELOPE)
_llm_start, _llm_end = maker(LLMStart, ENVELOPE), maker(LLMEnd, ENVELOPE)
_tool_start, _tool_end = maker(ToolStart, ENVELOPE), maker(ToolEnd, ENVELOPE)
_run_configured, _run_source = maker(RunConfigured, ENVELOPE), maker(RunSource, ENVELOPE)
_run_start, _run_end = maker(RunStart, ENVELOPE), maker(RunEnd, ENVELOPE)
_run_failed, _tool_call = maker(RunFailed, ENVELOPE), maker(ToolCall)


def _stop(req: ChatRequest, span: ForeignSpan, calls: tuple[ToolCall, ...]) -> StopReason:
    if span.status == "error":
        return "error"
    if req.finish_reason:
        return _STOP.get(req.finish_reason.lower(), "end_turn")
    return "tool_use" if calls else "end_turn"


def _listed_ids(output: Any) -> dict[str, str]:
    """Document ids by content from a retriever's output, where the span's own document
    attributes leave the id out (OpenInference's LangChain retriever span lists
    ``{"documents": [{"id", "page_content"}]}`` there)."""
    parsed = parse_json(output)
    listed = parsed.get("documents") if isinstance(parsed, Mapping) else None
    if not isinstance(listed, list):
        return {}
    return {text_of(d.get("page_content")): str(d["id"]) for d in listed
            if isinstance(d, Mapping) and d.get("id") and d.get("page_content")}


def _docs(spans: Sequence[ForeignSpan]) -> list[Doc]:
    out = []
    for s in spans:
        found = indexed(s.attributes, "retrieval.documents")
        listed = _listed_ids(s.attributes.get("output.value")) if any(
            not f.get("document.id") for _, f in found) else {}
        for _, f in found:
            score = f.get("document.score")
            content = text_of(f.get("document.content"))
            doc_id = str(f["document.id"]) if f.get("document.id") else listed.get(content)
            out.append(Doc(content=content, doc_id=doc_id,
                           score=float(score) if isinstance(score, int | float) else None))
    return out


def _in_request(doc: Doc, req: ChatRequest) -> bool:
    return bool(doc.content) and (any(doc.content in t for t in req.system) or any(
        doc.content in m.content for m in req.messages))


@dataclass(slots=True)
class _Walk:
    out: _Out
    framework: str
    origins: dict[int, str]
    turn_tag: str
    flagged: list[str] = field(default_factory=list)
    pending: list[ToolCall] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    """Each tool result a request of the trace holds, by call id: what the model was
    given."""
    empty: int = 0
    answer: str = ""
    tokens: list[int] = field(default_factory=lambda: [0, 0])


def _chat(w: _Walk, k: int, span: ForeignSpan, req: ChatRequest,
          docs: Sequence[Doc]) -> None:
    step, engine = f"llm#{k}", f"engine#{k}"
    out = w.out
    out.add(_iteration_start(out.env(engine, k, span.start_ns, span.span_id)))
    person = person_index(req) if k == 1 else None
    out.events += piece_events(req, docs, w.origins, person,
                               out.env(engine, k, span.start_ns, span.span_id),
                               piece_reason(step, w.framework))
    if person is not None:
        w.origins[msg_key(req.messages[person])] = "person"
    wire = wire_of(req)
    out.add(_llm_start(
        out.env(step, k, span.start_ns, span.span_id), provider=req.provider or "?",
        model=req.model or "?", request_hash=sha(wire),
        system_prompt_chars=sum(map(len, req.system)) + 2 * max(len(req.system) - 1, 0),
        messages_count=len(req.messages), tools_count=len(req.tools),
        tool_names=tuple(t.name for t in req.tools), temperature=req.temperature,
        request_ref=wire if req.has_content else None,
        params={"model": req.model, **req.params} if req.model else dict(req.params)))
    _chat_end(w, k, span, req)


def _chat_end(w: _Walk, k: int, span: ForeignSpan, req: ChatRequest) -> None:
    text = "\n".join(m.content for m in req.output if m.content)
    calls = tuple(_tool_call(id=c.id, name=c.name, arguments=c.arguments)
                  for m in req.output for c in m.tool_calls)
    if span.status == "error" and not text:
        text = span.status_message
    for m in req.output:
        w.origins[msg_key(m)] = f"llm#{k}"
    w.pending = list(calls)
    w.answer = text or w.answer
    w.tokens[0] += req.input_tokens
    w.tokens[1] += req.output_tokens
    w.out.add(_llm_end(
        w.out.env(f"llm#{k}", k, span.end_ns, span.span_id), content=text,
        response_hash=sha(text + repr([(c.id, c.name) for c in calls])), tool_calls=calls,
        input_tokens=req.input_tokens, output_tokens=req.output_tokens,
        stop_reason=_stop(req, span, calls), duration_ms=(span.end_ns - span.start_ns) / 1e6,
        model=req.model or None))


_HANDOFF = "handoff to "
"""How OpenInference names the span of an OpenAI Agents SDK handoff (``handoff to <agent>``,
input the agent handing off, output the one taking over); the model asked for it as the
tool call ``transfer_to_<agent>``, which the span does not name."""


def _handoff(span: ForeignSpan, pending: Sequence[ToolCall]) -> ToolCall | None:
    """The model's call a handoff span carried out: ``transfer_to_<agent>``, or the only
    call still waiting."""
    if not span.name.startswith(_HANDOFF):
        return None
    target = str(span.attributes.get("output.value") or span.name[len(_HANDOFF):])
    name = "transfer_to_" + re.sub(r"[^a-z0-9_]", "_", target.lower())
    return next((c for c in pending if c.name == name),
                pending[0] if len(pending) == 1 else None)


def _tool(w: _Walk, k: int, span: ForeignSpan) -> None:
    info = tool_info(span)
    call_id = info.call_id
    match = next((c for c in w.pending if c.id == call_id or (call_id is None and
                                                              c.name == info.name)), None)
    name, result = info.name, info.result
    if match is None and call_id is None and (match := _handoff(span, w.pending)) is not None:
        name, result = match.name, w.results.get(match.id, result)
        info = replace(info, arguments=match.arguments)
    if match is not None:
        w.pending.remove(match)
        call_id = call_id or match.id
    call_id = call_id or f"span-{span.span_id}"
    args = arguments_of(info.arguments) if isinstance(info.arguments, Mapping) or (
        match is None and info.arguments is not None) else (match.arguments if match else {})
    step = f"tool#{call_id}"
    w.out.add(_tool_start(w.out.env(step, k, span.start_ns, span.span_id),
                          tool_name=name, tool_call_id=call_id, args=dict(args)))
    failed = span.status == "error"
    w.out.add(_tool_end(
        w.out.env(step, k, span.end_ns, span.span_id), tool_call_id=call_id,
        tool_name=name, result=result or (span.status_message if failed else ""),
        status="failure" if failed else None, error=failed,
        duration_ms=(span.end_ns - span.start_ns) / 1e6))


def _root(spans: Sequence[ForeignSpan]) -> ForeignSpan:
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in ids]
    return min(roots or spans, key=lambda s: (s.start_ns, -s.end_ns))


def _framework(chats: Sequence[ForeignSpan], root: ForeignSpan) -> str:
    scope = next((s.scope for s in chats if s.scope), root.scope)
    return scope or str(root.resource.get("service.name") or "unknown")


def _flags(k: int, span: ForeignSpan, req: ChatRequest) -> list[str]:
    step = f"llm#{k}"
    found = [f"{step}: {note}" for note in req.notes]
    if not req.has_content:
        found.append(f"{step}: no request content in the span (content capture off, or inputs "
                     "hidden): its request cannot be re-sent")
    if span.dropped_attributes:
        found.append(f"{step}: the SDK dropped {span.dropped_attributes} attributes "
                     "(early messages may be missing)")
    found += [f"{step}: a {m.role} message truncated by the emitter"
              for m in req.messages if m.truncated]
    return found


def _error(spans: Sequence[ForeignSpan], root: ForeignSpan) -> ForeignSpan | None:
    if root.status == "error":
        return root
    last = max(spans, key=lambda s: s.end_ns)
    return last if last.status == "error" else None


def _error_type(span: ForeignSpan) -> str:
    for e in span.events:
        if e.name == "exception" and e.attributes.get("exception.type"):
            return str(e.attributes["exception.type"])
    return "Error"


def _end(w: _Walk, root: ForeignSpan, spans: Sequence[ForeignSpan], chats: int) -> None:
    failed = _error(spans, root)
    if failed is not None:
        stage = {"chat": "llm", "tool": "tool"}.get(kind_of(failed), "agent")
        w.out.add(_run_failed(
            w.out.env("run", 0, failed.end_ns, root.span_id), error_type=_error_type(failed),
            message=failed.status_message or f"span {failed.name!r} failed", stage=stage))
        return
    answer = w.answer or text_of(root.attributes.get("output.value"))
    w.out.add(_run_end(
        w.out.env("run", 0, root.end_ns, root.span_id), final_content=answer,
        total_input_tokens=w.tokens[0], total_output_tokens=w.tokens[1],
        iteration_count=chats, duration_ms=(root.end_ns - root.start_ns) / 1e6))


_RUN_KEYS = ("gen_ai.conversation.id", "session.id", "conversation.id", "user.id")


def _merged(spans: Sequence[ForeignSpan], keys: tuple[str, ...]) -> dict[str, Any]:
    """``keys`` as the spans' attributes merged (the first span holding a key wins)."""
    attrs: dict[str, Any] = {}
    for key in keys:
        for s in spans:
            if key in s.attributes:
                attrs[key] = s.attributes[key]
                break
    return attrs


def _head(out: _Out, root: ForeignSpan, spans: Sequence[ForeignSpan],
          reqs: Sequence[ChatRequest], flagged: list[str], framework: str,
          unmapped: int) -> None:
    agent = agent_name(spans, root)
    tools = tuple(dict.fromkeys(t.name for r in reqs for t in r.tools))
    model = next((r.model for r in reqs if r.model), "?")
    provider = next((r.provider for r in reqs if r.provider), "?")
    out.add(_run_configured(
        out.env("run", 0, root.start_ns, root.span_id), agent_name=agent, model=model,
        provider=provider, max_iterations=0, tool_names=tools, options={"source": "otlp"}))
    with_content = sum(r.has_content for r in reqs)
    fidelity = ("request-level" if with_content == len(reqs) else
                "usage-only" if with_content == 0 else "partial")
    dialect = next((r.dialect for r in reqs if r.has_content), "none")
    out.add(_run_source(
        out.env("run", 0, root.start_ns, root.span_id), source="otlp", framework=framework,
        dialect=dialect, fidelity=fidelity, foreign_trace_id=root.trace_id, unknown=UNKNOWN,
        flagged=tuple(flagged), spans=len(spans), unmapped_spans=unmapped))
    first = reqs[0] if reqs else None
    person = person_index(first) if first is not None else None
    user = first.messages[person].content if first is not None and person is not None else ""
    attrs = _merged(spans, _RUN_KEYS)
    out.add(_run_start(
        out.env("run", 0, root.start_ns, root.span_id), user_message=user,
        conversation_id=conversation_of(attrs),
        session_id=str(attrs["session.id"]) if attrs.get("session.id") else None,
        user_id=str(attrs["user.id"]) if attrs.get("user.id") else None))


def map_trace(spans: Sequence[ForeignSpan], logs: Sequence[ForeignLog],
              conversation: Conversation | None = None) -> MappedRun | None:
    """The run one trace's spans make (``None`` when no span is a model or tool call)."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    kinds = list(map(kind_of, ordered))
    chats = [s for s, kind in zip(ordered, kinds, strict=True) if kind == "chat"]
    if not chats and "tool" not in kinds:
        return None
    by_span: dict[str, list[ForeignLog]] = {}
    for log in logs:
        by_span.setdefault(log.span_id or "", []).append(log)
    reqs = [chat_request(merge_logs(s.attributes, by_span.get(s.span_id, ()))) for s in chats]
    root = _root(ordered)
    conv = conversation or Conversation()
    out = _Out(run_id_for(root.trace_id, root.start_ns), conv.turns, root.trace_id)
    framework = _framework(chats, root)
    flagged = [f for k, (s, r) in enumerate(zip(chats, reqs, strict=True), 1)
               for f in _flags(k, s, r)]
    rooted = any(s.parent_id is None for s in ordered)
    if not rooted:
        flagged.append("run: the trace's root span never arrived (the run is incomplete)")
    unmapped = kinds.count("other") + kinds.count("foreign")  # the rest are mapped kinds
    _head(out, root, ordered, reqs, flagged, framework, unmapped)
    w = _Walk(out=out, framework=framework, origins=dict(conv.origins),
              turn_tag=f"turn{conv.turns}",
              results={m.tool_call_id: m.content for r in reqs for m in r.messages
                       if m.role == "tool" and m.tool_call_id})
    _walk(w, ordered, kinds, dict(zip((s.span_id for s in chats), reqs, strict=True)))
    if rooted:  # without its root the run has no end to record
        _end(w, root, ordered, len(chats))
    _remember(conv, w)
    return MappedRun(run_id=out.run_id, events=tuple(out.events),
                     mapped_spans=len(kinds) - unmapped,
                     empty_chats=sum(not r.has_content for r in reqs))


def _walk(w: _Walk, ordered: Sequence[ForeignSpan], kinds: Sequence[str],
          reqs: Mapping[str, ChatRequest]) -> None:
    """Each span in time order. The documents a retriever marked are pieces of the next
    call, and of every later call whose request still holds their text (a tool loop sends
    the same retrieved context again)."""
    k, tools, retrieved = 0, 0, []
    earlier: list[Doc] = []
    waiting: list[Doc] = []
    chats = [reqs[s.span_id] for s, kind in zip(ordered, kinds, strict=True) if kind == "chat"]
    for span, kind in zip(ordered, kinds, strict=True):
        if kind == "retriever":
            retrieved.append(span)
        elif kind == "chat":
            if k:
                w.out.add(_iteration_end(w.out.env(f"engine#{k}", k, span.start_ns),
                                         tool_call_count=tools))
            k, tools = k + 1, 0
            req = reqs[span.span_id]
            fresh, waiting = _used(waiting + _docs(retrieved), req, chats[k:])
            again = [d for d in earlier if d not in fresh and _in_request(d, req)]
            _chat(w, k, span, req, again + fresh)
            earlier += [d for d in fresh if d not in earlier]
            retrieved = []
        elif kind == "tool":
            _tool(w, k, span)
            tools += 1
    if k:
        w.out.add(_iteration_end(w.out.env(f"engine#{k}", k, w.out.ts), tool_call_count=tools))


def _used(found: Sequence[Doc], req: ChatRequest,
          later: Sequence[ChatRequest]) -> tuple[list[Doc], list[Doc]]:
    """The retrieved documents that are pieces of this call, and those left for a later
    call whose request holds them (a retriever is linked to the call that used it; a
    document no call holds stays with the next call, where ``why`` flags it)."""
    now, wait = [], []
    for d in found:
        if not _in_request(d, req) and any(_in_request(d, r) for r in later):
            wait.append(d)
        else:
            now.append(d)
    return now, wait


def _remember(conv: Conversation, w: _Walk) -> None:
    for key, origin in w.origins.items():
        if ":" not in origin and (origin == "person" or origin.startswith("llm#")):
            conv.origins.setdefault(key, sys.intern(f"{w.turn_tag}:{origin}"))
    conv.turns += 1
