"""Events of one run -> span records (pure data, no OpenTelemetry import).

:class:`RunTrace` is fed one run's events in ``seq`` order and hands back
each span as it ends: the root ``invoke_agent {agent}`` span, one
``footprint.iteration`` span per loop iteration, and under it one
``chat {model}`` span per model call and one ``execute_tool {tool}`` span
per tool call (closed by call id, so a concurrent batch ending out of order
is parented and timed right). Every decision event becomes a span event
``footprint.<type>`` on the span it belongs to (:func:`recorder.otel._ids.span_key`),
timed by the event. The live sink and the backfill use the same class.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from footprint.events import (
    TERMINAL_TYPES,
    ContextInjected,
    EventBase,
    FeedbackRecorded,
    IterationEnd,
    LLMEnd,
    LLMStart,
    RunConfigured,
    RunEnd,
    RunFailed,
    RunStart,
    ToolEnd,
    ToolStart,
)
from recorder.otel._attributes import DECISION_EVENTS, MAX_ITEMS, Attrs, clip, ids
from recorder.otel._content import (
    Bounded,
    input_messages,
    output_messages,
    read_request,
    system_instructions,
    tool_definitions,
    user_message,
)
from recorder.otel._ids import ROOT_KEY, span_key
from recorder.otel._openinference import OpenInference
from recorder.store._prices import Prices

__all__ = ["EVALUATION_EVENT", "FINISH_REASONS", "RunTrace", "SpanRecord", "TracePart",
           "evaluation_span"]

FINISH_REASONS = {
    "end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_call",
    "max_tokens": "length", "error": "error",
}
"""Our stop reasons in the GenAI conventions' ``gen_ai.response.finish_reasons`` vocabulary."""
_TOOL_ERRORS = frozenset({"failure", "denied", "invalid"})
_EVENT_NAMES = {tag: "footprint." + tag for tag in DECISION_EVENTS}
EVALUATION_EVENT = "gen_ai.evaluation.result"


@dataclass(slots=True)
class SpanRecord:
    """One span as plain data; ids come from ``(run id, key)`` and ``(run id, parent_key)``."""

    key: str
    name: str
    kind: Literal["internal", "client"]
    parent_key: str | None
    start_ns: int
    end_ns: int = 0
    attributes: Attrs = field(default_factory=dict)
    events: list[tuple[str, int, Attrs]] = field(default_factory=list)
    error: str | None = None


@dataclass(slots=True, kw_only=True)
class TracePart:
    """What feeding one chunk of a split run left open, for the merge in run order
    (:mod:`recorder.otel._chunks`): the root's share, the spans not ended, usage totals."""

    root: SpanRecord | None
    open: list[SpanRecord]
    iteration: SpanRecord | None
    cache_read: int
    cache_write: int
    cost: float
    unpriced: int
    last_ns: int
    terminal: bool


def _put_content(a: Attrs, key: str, value: Bounded) -> None:
    a[key] = value.text
    if value.omitted:
        a["footprint.content.omitted_messages"] = value.omitted
    if value.truncated:
        a["footprint.content.truncated"] = True


class RunTrace:
    """The span state of one run: open spans by key, usage totals, the last timestamp."""

    __slots__ = ("_cache_read", "_cache_write", "_content", "_cost", "_docs", "_ended_iteration",
                 "_iteration", "_limit", "_oi", "_open", "_part", "_prices", "_results",
                 "_terminal", "_unpriced", "last_ns", "root", "run_id")

    def __init__(self, run_id: str, *, content: bool = False, content_limit: int = 16384,
                 openinference: bool = False, part: bool = False,
                 after_iteration: int = -1, prices: Prices | None = None) -> None:
        """``part=True`` feeds one chunk of a split run: the end of the run closes
        nothing (:meth:`part` hands the open state to the merge), and
        ``after_iteration`` is the iteration the chunk before ended. ``prices``
        price each model call (default: ``genai-prices`` alone)."""
        self.run_id = run_id
        self._content = content
        self._limit = content_limit
        self._oi = OpenInference(content, content_limit) if openinference else None
        self._results: dict[str, str] = {}  # tool call id -> recorded result (content on)
        self._docs: list[ContextInjected] = []  # the documents landed for the next call
        self.root: SpanRecord | None = None
        self._open: dict[str, SpanRecord] = {}
        self._iteration: SpanRecord | None = None
        self._ended_iteration = after_iteration
        self._part = part
        self._terminal = False
        self._cache_read = 0
        self._cache_write = 0
        self._prices = prices if prices is not None else _default_prices()
        self._cost = 0.0
        self._unpriced = 0
        self.last_ns = 0

    # -- feeding ------------------------------------------------------------------
    def feed(self, event: EventBase) -> list[SpanRecord]:
        """Take one event; return the spans it ended (children before parents)."""
        if isinstance(event, FeedbackRecorded):
            return [evaluation_span(event)]  # its own span, wherever the run's spans are
        ts = self.last_ns = event.ts
        root = self.root if self.root is not None else self._start_root(event)
        tag: str = getattr(event, "type", "")
        key = span_key(event)
        done: list[SpanRecord] = []
        if key != ROOT_KEY:
            self._enter_iteration(event, done)
        handler = _HANDLERS.get(tag)
        if handler is not None:
            handler(self, event, key, done)
        attributes = DECISION_EVENTS.get(tag)
        if attributes is not None:
            host = root if key == ROOT_KEY else self._open.get(key) or self._iteration or root
            host.events.append((_EVENT_NAMES[tag], ts, attributes(event, self._content)))
        if tag in TERMINAL_TYPES:
            if self._part:
                self._terminal = True
            else:
                done.extend(self.close(ts))
        return done

    def finish(self) -> list[SpanRecord]:
        """Once no event of the run will follow: every open span ended, the root marked
        ``footprint.incomplete`` when the run's end never came (nothing when it closed)."""
        if self.root is None:
            return []
        if not self._terminal:
            self.root.attributes["footprint.incomplete"] = True
        return self.close()

    def part(self) -> TracePart:
        """The state a chunk's feeding left (``part=True``), for :meth:`merge`."""
        return TracePart(root=self.root, open=list(self._open.values()),
                         iteration=self._iteration, cache_read=self._cache_read,
                         cache_write=self._cache_write, cost=self._cost,
                         unpriced=self._unpriced, last_ns=self.last_ns,
                         terminal=self._terminal)

    def merge(self, later: TracePart) -> None:
        """Fold in the part of the chunk that follows this trace's events: the root's
        name, attributes, error and span events; its open spans; usage totals."""
        theirs, root = later.root, self.root
        if theirs is not None and root is not None:
            if theirs.name != "invoke_agent":
                root.name = theirs.name
            root.attributes.update(theirs.attributes)
            root.events.extend(theirs.events)
            root.error = theirs.error if theirs.error is not None else root.error
        self._open.update((s.key, s) for s in later.open)
        self._iteration = later.iteration or self._iteration
        self._cache_read += later.cache_read
        self._cache_write += later.cache_write
        self._cost += later.cost
        self._unpriced += later.unpriced
        self.last_ns = later.last_ns
        self._terminal = self._terminal or later.terminal

    def close(self, end_ns: int | None = None) -> list[SpanRecord]:
        """End every open span at ``end_ns`` (default: the last event's time), root last."""
        end = self.last_ns if end_ns is None else end_ns
        done = [self._end(s, end) for s in list(self._open.values())]
        if self._iteration is not None:
            done.append(self._end(self._iteration, end))
            self._iteration = None
        if self.root is not None:
            if self._cache_read:
                self.root.attributes["gen_ai.usage.cache_read.input_tokens"] = self._cache_read
            if self._cache_write:
                self.root.attributes["gen_ai.usage.cache_creation.input_tokens"] = (
                    self._cache_write)
            _put_cost(self.root.attributes, self._cost, self._unpriced)
            done.append(self._end(self.root, end))
            self.root = None
        return done

    # -- structure -----------------------------------------------------------------
    def _start_root(self, event: EventBase) -> SpanRecord:
        self.root = SpanRecord(
            key=ROOT_KEY, name="invoke_agent", kind="internal", parent_key=None,
            start_ns=event.ts,
            attributes={"gen_ai.operation.name": "invoke_agent", "footprint.run.id": self.run_id},
        )
        if self._oi is not None:
            self._oi.kind(self.root.attributes, "AGENT")
        return self.root

    def _enter_iteration(self, event: EventBase, done: list[SpanRecord]) -> None:
        current = self._iteration
        if current is not None and current.attributes["footprint.iteration"] == event.iteration:
            return
        if current is not None:
            done.append(self._end(current, event.ts))
        elif event.iteration == self._ended_iteration:
            return  # a straggler after iteration.end: it lands on the root
        self._iteration = SpanRecord(
            key=f"iteration#{event.turn}.{event.iteration}", name="footprint.iteration",
            kind="internal", parent_key=ROOT_KEY, start_ns=event.ts,
            attributes={"footprint.iteration": event.iteration},
        )
        if self._oi is not None:
            self._oi.kind(self._iteration.attributes, "CHAIN")

    def _child(self, key: str, name: str, kind: Literal["internal", "client"], ts: int,
               attrs: Attrs) -> SpanRecord:
        parent = self._iteration.key if self._iteration is not None else ROOT_KEY
        span = SpanRecord(key=key, name=name, kind=kind, parent_key=parent, start_ns=ts,
                          attributes=attrs)
        self._open[key] = span
        return span

    def _end(self, span: SpanRecord, end_ns: int) -> SpanRecord:
        span.end_ns = max(end_ns, span.start_ns)
        self._open.pop(span.key, None)
        return span

    # -- per event type ------------------------------------------------------------
    def _configured(self, e: RunConfigured, key: str, done: list[SpanRecord]) -> None:
        root = self.root
        assert root is not None
        root.name = f"invoke_agent {clip(e.agent_name, 128)}"
        root.attributes.update({
            "gen_ai.agent.name": clip(e.agent_name), "gen_ai.provider.name": clip(e.provider),
            "gen_ai.request.model": clip(e.model), "footprint.injection.count":
            e.injection_count,
        })

    def _started(self, e: RunStart, key: str, done: list[SpanRecord]) -> None:
        assert self.root is not None
        _labels(self.root.attributes, e)
        if self._content:
            _put_content(self.root.attributes, "gen_ai.input.messages",
                         user_message(e.user_message, self._limit))
        if self._oi is not None:
            self._oi.run_input(self.root.attributes, e)

    def _ended(self, e: RunEnd, key: str, done: list[SpanRecord]) -> None:
        assert self.root is not None
        a = self.root.attributes
        a["gen_ai.usage.input_tokens"] = e.total_input_tokens
        a["gen_ai.usage.output_tokens"] = e.total_output_tokens
        a["footprint.iteration.count"] = e.iteration_count
        if e.stopped_early is not None:
            a["footprint.stopped_early"] = e.stopped_early
        if e.dropped_events:
            a["footprint.dropped_events"] = e.dropped_events
        if self._content:
            _put_content(a, "gen_ai.output.messages",
                         output_messages(e.final_content, (), "stop", self._limit))
        if self._oi is not None:
            self._oi.run_output(a, e.final_content)

    def _failed(self, e: RunFailed, key: str, done: list[SpanRecord]) -> None:
        """The run's error on the root, and on the model or tool call it died in (the span
        still open): error status, ``error.type`` and an ``exception`` span event. The
        message may quote the conversation: it is exported only with content on."""
        assert self.root is not None
        kind = clip(e.error_type or "_OTHER")
        self.root.error = "run failed: " + clip(e.error_type, 128)
        self.root.attributes["error.type"] = kind
        exception: Attrs = {"exception.type": kind}
        if self._content:
            exception["exception.message"] = clip(e.message, self._limit)
        calls = list(self._open.values())  # model and tool calls (iterations are apart)
        host = calls[-1] if calls else self.root
        if host is not self.root:
            what = "model call" if host.kind == "client" else "tool call"
            host.error = f"{what} failed: {kind}" + (
                f": {clip(e.message, 1024)}" if self._content else "")
            host.attributes["error.type"] = kind
        host.events.append(("exception", e.ts, exception))

    def _llm_start(self, e: LLMStart, key: str, done: list[SpanRecord]) -> None:
        a: Attrs = {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": clip(e.provider),
            "gen_ai.request.model": clip(e.model),
        }
        if e.brain_via is not None:
            a["footprint.brain.via"] = clip(e.brain_via)
            if e.brain_skill_id is not None:
                a["footprint.brain.skill_id"] = clip(e.brain_skill_id)
        if e.temperature is not None:
            a["gen_ai.request.temperature"] = e.temperature
        prompt = (read_request(e.request_ref, self._results)
                  if self._content and e.request_ref else None)
        if prompt is not None:
            if prompt.system:
                _put_content(a, "gen_ai.system_instructions",
                             system_instructions(prompt.system, self._limit))
            _put_content(a, "gen_ai.input.messages", input_messages(prompt, self._limit))
            tools = tool_definitions(str(e.request_ref), self._limit)
            if tools is not None:
                a["gen_ai.tool.definitions"] = tools
        self._retrieved(e, key, done)
        if self._oi is not None:
            self._oi.chat_input(a, e, prompt)
        self._child(key, f"chat {clip(e.model, 128)}", "client", e.ts, a)

    def _injected(self, e: ContextInjected, key: str, done: list[SpanRecord]) -> None:
        if self._content and e.source == "rag" and e.raw_content is not None:
            self._docs.append(e)

    def _retrieved(self, e: LLMStart, key: str, done: list[SpanRecord]) -> None:
        """The documents landed for this call (content on) as a retriever span just before
        it, as OpenInference records a retriever: each document's id, text and score."""
        docs, self._docs = self._docs, []
        if not docs:
            return
        a: Attrs = {"openinference.span.kind": "RETRIEVER"}
        for i, d in enumerate(docs):
            at = f"retrieval.documents.{i}.document."
            a[at + "id"] = clip((d.injection_id or "").removeprefix("doc:") or d.content_hash)
            a[at + "content"] = clip(d.raw_content or "", self._limit)
            if d.retrieval_score is not None:
                a[at + "score"] = d.retrieval_score
        done.append(self._end(self._child(f"{key}.retrieve", "retrieve", "internal", e.ts, a),
                              e.ts))

    def _llm_end(self, e: LLMEnd, key: str, done: list[SpanRecord]) -> None:
        span = self._open.get(key) or self._child(key, "chat", "client", e.ts, {
            "gen_ai.operation.name": "chat"})
        a = span.attributes
        a["gen_ai.response.model"] = clip(e.model or str(a.get("gen_ai.request.model", "")))
        if e.input_tokens is not None:  # None: the server reported no usage (unknown)
            a["gen_ai.usage.input_tokens"] = e.input_tokens
        if e.output_tokens is not None:
            a["gen_ai.usage.output_tokens"] = e.output_tokens
        if e.cache_read_tokens is not None:
            a["gen_ai.usage.cache_read.input_tokens"] = e.cache_read_tokens
            self._cache_read += e.cache_read_tokens
        if e.cache_write_tokens is not None:
            a["gen_ai.usage.cache_creation.input_tokens"] = e.cache_write_tokens
            self._cache_write += e.cache_write_tokens
        self._price_call(a, e)
        finish = FINISH_REASONS.get(e.stop_reason, e.stop_reason)
        a["gen_ai.response.finish_reasons"] = (finish,)
        if e.time_to_first_chunk_s is not None:  # a streamed reply
            a["gen_ai.response.time_to_first_chunk"] = e.time_to_first_chunk_s
        if e.stop_reason == "error":
            span.error = "model call failed"
            a["error.type"] = "_OTHER"
        if self._content:
            calls = [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)}
                     for c in e.tool_calls]
            _put_content(a, "gen_ai.output.messages",
                         output_messages(e.content, calls, finish, self._limit))
        if self._oi is not None:
            self._oi.chat_output(a, e)
        done.append(self._end(span, e.ts))

    def _price_call(self, a: Attrs, e: LLMEnd) -> None:
        """The call's USD (``footprint.usage.cost_usd``: the GenAI conventions have no cost
        attribute yet), summed for the root; an unpriced model is counted, never 0."""
        price = self._prices.price(str(a["gen_ai.response.model"]))
        if price is None or e.input_tokens is None or e.output_tokens is None:
            self._unpriced += 1
            _put_cost(a, 0.0, 1)
            return
        provider = a.get("gen_ai.provider.name")
        cost = price.cost(input_tokens=e.input_tokens, output_tokens=e.output_tokens,
                          cache_read=e.cache_read_tokens or 0,
                          cache_write=e.cache_write_tokens or 0,
                          provider=provider if isinstance(provider, str) else None)
        self._cost += cost
        _put_cost(a, cost, 0)

    def _tool_start(self, e: ToolStart, key: str, done: list[SpanRecord]) -> None:
        a: Attrs = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": clip(e.tool_name),
            "gen_ai.tool.call.id": clip(e.tool_call_id),
        }
        if e.parallel_count is not None:
            a["footprint.tool.parallel_count"] = e.parallel_count
        if self._content:
            a["gen_ai.tool.call.arguments"] = clip(
                json.dumps(dict(e.args), ensure_ascii=False, default=str), self._limit)
        if self._oi is not None:
            self._oi.tool_input(a, e)
        self._child(key, f"execute_tool {clip(e.tool_name, 128)}", "internal", e.ts, a)

    def _tool_end(self, e: ToolEnd, key: str, done: list[SpanRecord]) -> None:
        span = self._open.get(key) or self._child(
            key, f"execute_tool {clip(e.tool_name, 128)}", "internal", e.ts,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": clip(e.tool_name),
             "gen_ai.tool.call.id": clip(e.tool_call_id)})
        if e.status is not None and e.status != "success":
            span.attributes["footprint.tool.status"] = e.status
        if e.error or e.status in _TOOL_ERRORS:
            span.error = f"tool {clip(e.tool_name, 64)} failed"
            span.attributes["error.type"] = e.status if e.status in _TOOL_ERRORS else "_OTHER"
        if self._content:
            span.attributes["gen_ai.tool.call.result"] = clip(e.result, self._limit)
            self._results[e.tool_call_id] = e.result
        if self._oi is not None:
            self._oi.tool_output(span.attributes, e.result)
        done.append(self._end(span, e.ts))

    def _iteration_end(self, e: IterationEnd, key: str, done: list[SpanRecord]) -> None:
        span = self._iteration
        if span is not None:
            done.append(self._end(span, e.ts))
            self._iteration = None
            self._ended_iteration = e.iteration


_PRICES: list[Prices] = []


def _default_prices() -> Prices:
    """One ``genai-prices`` lookup cache for every trace of the process."""
    if not _PRICES:
        _PRICES.append(Prices())
    return _PRICES[0]


def _put_cost(a: Attrs, cost: float, unpriced: int) -> None:
    if unpriced:
        a["footprint.usage.unpriced_calls"] = unpriced
    else:
        a["footprint.usage.cost_usd"] = cost


def _labels(a: Attrs, e: RunStart) -> None:
    """The run's labels on the root span: a session names the conversation for backends."""
    conversation = e.session_id or e.conversation_id
    if conversation:
        a["gen_ai.conversation.id"] = clip(conversation)
    if e.session_id and e.conversation_id:
        a["footprint.conversation.id"] = clip(e.conversation_id)
    if e.user_id:
        a["user.id"] = clip(e.user_id)
    if e.environment:
        a["deployment.environment.name"] = clip(e.environment)
        a["deployment.environment"] = clip(e.environment)
    if e.release:
        a["service.version"] = clip(e.release)
    if e.tags:
        a["footprint.tags"] = ids(e.tags)
    for name, value in list(e.metadata.items())[:MAX_ITEMS]:
        a["footprint.metadata." + clip(name, 64)] = (
            value if isinstance(value, bool | int | float) else clip(str(value)))


_Handler: TypeAlias = Callable[[RunTrace, Any, str, list[SpanRecord]], None]
_HANDLERS: dict[str, _Handler] = {
    "run.configured": RunTrace._configured,
    "run.start": RunTrace._started,
    "run.end": RunTrace._ended,
    "run.error": RunTrace._failed,
    "context.injected": RunTrace._injected,
    "llm.start": RunTrace._llm_start,
    "llm.end": RunTrace._llm_end,
    "tool.start": RunTrace._tool_start,
    "tool.end": RunTrace._tool_end,
    "iteration.end": RunTrace._iteration_end,
}


def _evaluation_attributes(event: FeedbackRecorded) -> Attrs:
    """The conventions' attributes of one feedback event (``None`` values left out)."""
    attrs: Attrs = {"gen_ai.evaluation.name": clip(event.name)}
    if event.value is not None:
        attrs["gen_ai.evaluation.score.value"] = float(event.value)
    if event.label is not None:
        attrs["gen_ai.evaluation.score.label"] = clip(event.label)
    if event.comment is not None:
        attrs["gen_ai.evaluation.explanation"] = clip(event.comment)
    if event.by is not None:
        attrs["footprint.feedback.by"] = clip(event.by)
    return attrs


def evaluation_span(event: FeedbackRecorded) -> SpanRecord:
    """Feedback on a run as a ``gen_ai.evaluation.result``, under the run's root span.

    The GenAI conventions define ``gen_ai.evaluation.result`` as an event
    parented to the span it evaluates. Feedback mostly arrives after the run's
    spans were exported, when no event can join them, so it travels as a
    zero-duration span of that name, child of the root ``invoke_agent`` span
    (ids derive from the run id: the ones the backend already holds), carrying
    the event of the same name with ``gen_ai.evaluation.name``,
    ``.score.value``, ``.score.label`` and ``.explanation`` (the comment).
    """
    attrs = _evaluation_attributes(event)
    return SpanRecord(
        key=f"feedback#{event.seq}.{event.ts}", name=EVALUATION_EVENT, kind="internal",
        parent_key=ROOT_KEY, start_ns=event.ts, end_ns=event.ts,
        attributes={**attrs, "footprint.run.id": event.run_id},
        events=[(EVALUATION_EVENT, event.ts, attrs)],
    )
