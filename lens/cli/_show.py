"""``footprint show RUN``: a readable timeline — cursor, refusals, injections, tools, answer."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    FeedbackRecorded,
    LLMEnd,
    LLMStart,
    RouteConflict,
    RunEnd,
    RunFailed,
    RunSource,
    RunStart,
    SkillActivated,
    SkillEscalated,
    SkillRejected,
    ToolEffect,
    ToolEnd,
    ToolStart,
)
from lens.cli._common import clip, open_from, terminal_safe
from lens.playback._answer import answer_flags, tokens_of
from lens.playback._foreign import source_lines
from recorder.store._prices import usd

if TYPE_CHECKING:
    from recorder import Store
    from recorder.store._prices import Prices

__all__ = ["SHOWN_TYPES", "run", "timeline"]


def _cursor(e: ContextEvaluated) -> str | None:
    move = e.cursor_move
    if move is None:
        return None
    where = f"{move.from_skill or '∅'} → {move.to or '∅'}"
    why = f" witness {move.witness!r}" if move.witness else ""
    return f"cursor    {where} (by {move.by}){why}"


def _line(e: Event, costs: _Costs) -> str | None:
    if isinstance(e, RunStart):
        return f"user      {clip(e.user_message, 100)}"
    if isinstance(e, ContextEvaluated):
        return _cursor(e)
    if isinstance(e, ContextInjected):
        src = f"{e.source} {e.injection_id!r}" if e.injection_id else e.source
        if e.slot == "tools":
            src += f" {clip(e.content_summary.split(':', 1)[0], 30)}"
        by = f", admitted by seq {e.admitted_by}" if e.admitted_by is not None else ""
        return f"injected  [{e.slot}] {src} via {e.admitted_via}{by}"
    if isinstance(e, SkillActivated):
        return f"skill +   {e.skill_id} ({e.reason})"
    if isinstance(e, SkillRejected):
        allowed = ", ".join(e.allowed) or "none"
        return (f"REJECTED  {e.requested_id!r} from {e.current_skill_id or '∅'}: "
                f"{e.reason} (allowed: {allowed})")
    if isinstance(e, SkillEscalated):
        return (f"ESCALATED after {e.refusals} refusals: {e.from_provider}/{e.from_model} → "
                f"{e.to_provider}/{e.to_model or '(same model)'}")
    if isinstance(e, RouteConflict):
        return f"conflict  winner {e.winner.tool_name} → {e.winner.target}, {len(e.losers)} lost"
    if isinstance(e, LLMStart):
        costs.call = e
        return f"llm       {e.provider}/{e.model} ({e.messages_count} msgs, {e.tools_count} tools)"
    if isinstance(e, LLMEnd):
        calls = ", ".join(c.name for c in e.tool_calls) or "no tool calls"
        return (f"  reply   {clip(e.content, 70)!r} [{calls}; "
                f"{tokens_of(e)}, {usd(costs.add(e))}, "
                f"{e.stop_reason}]")
    if isinstance(e, ToolStart):
        return f"tool      {e.tool_name}({clip(dict(e.args), 60)}) #{e.tool_call_id}"
    if isinstance(e, ToolEnd):
        flag = " ERROR" if e.error else ""
        return f"  result  {clip(e.result, 80)!r}{flag}"
    if isinstance(e, ToolEffect):
        return f"effect    {e.kind} {e.outcome}" + (f": {e.reason}" if e.reason else "")
    if isinstance(e, RunFailed):
        return f"FAILED    {e.error_type} in {e.stage}: {e.message}"  # whole: it is the why
    return None


SHOWN_TYPES = (
    "run.start", "context.evaluated", "context.injected", "skill.activated", "skill.rejected",
    "skill.escalated", "skill.route_conflict", "llm.start", "llm.end", "tool.start",
    "tool.end", "tool.effect", "run.error", "run.end", "feedback.recorded",
)
"""The event types a timeline line (or the answer) comes from; only these are read."""


class _Costs:
    """Each reply priced as it streams by (as the ``llm_calls`` view prices it), summed."""

    def __init__(self, prices: Prices | None) -> None:
        self.prices = prices
        self.call: LLMStart | None = None
        self.total, self.unpriced = 0.0, set[str]()

    def add(self, e: LLMEnd) -> float | None:
        model = e.model or (self.call.model if self.call is not None else None)
        price = self.prices.price(model) if self.prices is not None else None
        if price is None or e.input_tokens is None or e.output_tokens is None:
            self.unpriced.add(model or "?")
            return None
        cost = price.cost(input_tokens=e.input_tokens, output_tokens=e.output_tokens,
                          cache_read=e.cache_read_tokens or 0,
                          cache_write=e.cache_write_tokens or 0,
                          provider=self.call.provider if self.call is not None else None)
        self.total += cost
        return cost

    def line(self) -> str:
        if self.unpriced:
            return (f"cost: unpriced (no price for {', '.join(sorted(self.unpriced))}; "
                    "add it to the store's prices.json)")
        return f"cost: {usd(self.total)}"


def timeline(events: Iterable[Event], prices: Prices | None = None) -> Iterator[str]:
    """The run as lines, grouped under one header per iteration, ending with the answer
    and the cost (each reply priced by ``prices``; ``None``: unpriced).

    A generator: each line is yielded as soon as its event is read.
    """
    costs = _Costs(prices)
    iteration = -1
    answer: str | None = None
    failed: RunFailed | None = None
    said: list[str] = []
    last: LLMEnd | None = None
    for event in events:
        if isinstance(event, RunEnd):
            answer = event.final_content
            continue
        if isinstance(event, RunFailed):
            failed = event
        if isinstance(event, LLMEnd):
            last = event
        if isinstance(event, FeedbackRecorded):
            said.append(_feedback(event))
            continue
        text = _line(event, costs)
        if text is None:
            continue
        if event.iteration != iteration and event.iteration > 0:
            iteration = event.iteration
            yield f"── iteration {iteration} " + "─" * 40
        yield f"  {event.seq:>5}  {text}"
    yield f"answer: {_no_answer(failed)}" if answer is None else f"answer: {answer}"
    yield from (f"  ⚠ {flag}" for flag in (answer_flags(last) if last is not None else ()))
    yield from said
    yield costs.line()


def _no_answer(failed: RunFailed | None) -> str:
    """Why a run has no answer: it failed (where, and with what), or it never ended."""
    if failed is None:
        return "(none — the run did not end: still running, or its process was killed)"
    return (f"(none — the run FAILED: {failed.error_type} in stage {failed.stage!r}; "
            "its error is above)")


def _feedback(e: FeedbackRecorded) -> str:
    """One score given after the run: ``feedback helpful=0 'why' by u-7 (seq 12)``."""
    given = [f"{e.name}={e.value:g}"] if e.value is not None else [e.name]
    given += [f"[{e.label}]"] if e.label is not None else []
    given += [repr(clip(e.comment, 80))] if e.comment else []
    given += [f"by {e.by}"] if e.by else []
    return f"feedback: {' '.join(given)} (seq {e.seq})"


def _header(store: Store, run_id: str) -> str:
    from recorder import RunQuery, list_runs

    head = list_runs(store, RunQuery(run_ids=(run_id,), limit=1), costs=False).to_pylist()[0]
    dropped, mirror = head["dropped"], head["mirror_dropped"]
    return (f"run {run_id} · {head['status']} · model {head['model'] or '?'} · "
            f"{head['iterations'] or 0} iterations · {head['tokens']} tokens · "
            f"{head['events']} events" + (f" · {dropped} dropped" if dropped else "")
            + (f" · {mirror} spans not exported" if mirror else "")
            + (f"\nfailed at {head['failed_step'] or '?'}: {head['error_type']}"
               if head["status"] == "failed" else ""))


def run(args: argparse.Namespace) -> int:
    from recorder import EventQuery, StoreReader
    from recorder.store._prices import load_prices

    store = open_from(args)
    run_id = store.resolve_run(args.run)
    print(terminal_safe(_header(store, run_id)), flush=True)
    reader = StoreReader(store)
    first = reader.page(EventQuery(run_id=run_id), limit=64, columns=("trace_id",))
    trace = next((t for t in first.column("trace_id").to_pylist() if t), None)
    if trace:
        print(f"trace {trace} (OpenTelemetry: search your tracing backend for it)", flush=True)
    for source in reader.events(EventQuery(run_id=run_id, types=("run.source",))):
        if isinstance(source, RunSource):
            print(terminal_safe("\n".join(source_lines(source))), flush=True)
    prices = load_prices(store.root)
    for line in timeline(reader.events(EventQuery(run_id=run_id, types=SHOWN_TYPES)), prices):
        print(terminal_safe(line))
    return 0
