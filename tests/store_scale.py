"""Big generated stores for the store-scale tests and benchmarks.

Runs are written through a real :class:`recorder.ParquetSink` (the store's
own layout, heads and row checks), a batch of events per export, so a
generated store verifies like a recorded one. Each iteration is the shape an
agent loop leaves: iteration start, context evaluated, a skill injection, a
model call with tokens, a tool call, iteration end.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    FeedbackRecorded,
    IterationEnd,
    IterationStart,
    LLMEnd,
    LLMStart,
    RunEnd,
    RunFailed,
    RunStart,
    SkillActivated,
    SkillRejected,
    ToolEnd,
    ToolStart,
)
from recorder import ParquetSink

T0 = 1_767_225_600_000_000_000
DECISION_T0 = 1_700_000_000_000_000_000
PER_ITERATION = 8
REFUSALS_SQL = (  # the SQL figures' queries over a :func:`write_decision_runs` store
    "SELECT run_id, count(*) AS refusals FROM rejections GROUP BY run_id "
    "ORDER BY refusals DESC LIMIT 10"
)
SWITCHES_SQL = (
    "SELECT run_id, count(*) AS switches FROM events WHERE type = 'context.evaluated' "
    "AND from_skill IS DISTINCT FROM to_skill GROUP BY run_id ORDER BY switches DESC LIMIT 10"
)
MODELS = ("model-a", "model-b", "model-c")
STATUSES = ("complete", "failed", "incomplete")


def run_id_of(n: int) -> str:
    """The id of generated run ``n`` (sortable, unique)."""
    return f"0190bbbb-0000-7000-8000-{n:012d}"


def _iteration(run: str, seq: int, it: int, ts: int, model: str) -> list[Event]:
    env = {"run_id": run, "turn": 0, "iteration": it, "step_id": f"engine#{it}"}
    skill = f"skill-{it % 5}"
    return [
        IterationStart(**env, seq=seq, ts=ts),  # type: ignore[arg-type]
        ContextEvaluated(**env, seq=seq + 1, ts=ts + 1, active_count=1,  # type: ignore[arg-type]
                         skipped_count=0, evaluated_total=1, active_ids=(skill,),
                         cursor_move=CursorMove(by="intent", from_skill=f"skill-{(it - 1) % 5}",
                                                to=skill)),
        ContextInjected(**env, seq=seq + 2, ts=ts + 2, slot="system-prompt",  # type: ignore[arg-type]
                        source="skill", content_hash=f"{it % 97:064x}",
                        content_summary=f"the {skill} instructions", reason="active",
                        admitted_via="always", injection_id=skill),
        LLMStart(**env, seq=seq + 3, ts=ts + 3, provider="scripted", model=model,  # type: ignore[arg-type]
                 request_hash=f"{seq:064x}", messages_count=it + 1, tools_count=2),
        LLMEnd(**env, seq=seq + 4, ts=ts + 4, content=f"calling lookup for step {it}",  # type: ignore[arg-type]
               response_hash=f"{seq + 4:064x}", input_tokens=100 + it % 50,
               output_tokens=20 + it % 7, model=model),
        ToolStart(**env, seq=seq + 5, ts=ts + 5, tool_name="lookup",  # type: ignore[arg-type]
                  tool_call_id=f"c{seq}", args={"q": f"item {it}"}),
        ToolEnd(**env, seq=seq + 6, ts=ts + 6, tool_name="lookup",  # type: ignore[arg-type]
                tool_call_id=f"c{seq}", result=f"item {it}: in stock", status="ok"),
        IterationEnd(**env, seq=seq + 7, ts=ts + 7, tool_call_count=1),  # type: ignore[arg-type]
    ]


def _labels(n: int) -> dict[str, object]:
    """A labelled run's user (100 of them), session (5 runs each), tags and release."""
    return {"user_id": f"user-{n % 100}", "session_id": f"session-{n // 5}",
            "tags": ("bench", f"shard-{n % 4}"), "release": f"1.{n % 3}"}


def run_events(n: int, iterations: int, *, start_ns: int = T0,
               labelled: bool = False) -> Iterator[Event]:
    """Run ``n``: ``run.start``, ``iterations`` loops, then an end by its status;
    ``labelled``: with :func:`_labels` and, every other complete run, a ``helpful`` score."""
    run, model, status = run_id_of(n), MODELS[n % 3], STATUSES[n % 3] if n % 7 == 0 else "complete"
    yield RunStart(run_id=run, seq=0, ts=start_ns, user_message=f"request {n}",
                   **(_labels(n) if labelled else {}))  # type: ignore[arg-type]
    seq = 1
    for it in range(1, iterations + 1):
        yield from _iteration(run, seq, it, start_ns + seq * 1000, model)
        seq += PER_ITERATION
    if status == "complete":
        yield RunEnd(run_id=run, seq=seq, ts=start_ns + seq * 1000, iteration=iterations,
                     final_content=f"APPROVED order {n} after {iterations} steps")
        if labelled and n % 2 == 0:
            yield FeedbackRecorded(run_id=run, seq=seq + 1, ts=start_ns + (seq + 1) * 1000,
                                   iteration=iterations, name="helpful", value=float(n % 4 == 0))
    elif status == "failed":
        yield RunFailed(run_id=run, seq=seq, ts=start_ns + seq * 1000, iteration=iterations,
                        error_type="RunError", message=f"run {n} failed", stage="tool")


def status_of(n: int) -> str:
    """The status generated run ``n`` ends with."""
    return STATUSES[n % 3] if n % 7 == 0 else "complete"


def write_runs(root: Path, first: int, runs: int, *, compact_at: int | None = None) -> None:
    """Runs ``first``.. (``runs`` of them, 2 iterations each) into the store at ``root``, a
    sealed segment per run (``compact_at``: the writer's own compaction, ``None`` none)."""
    sink = ParquetSink(root, seal_rows=1, compact_at=compact_at)
    try:
        for n in range(first, first + runs):
            sink.export(list(run_events(n, 2)))
    finally:
        sink.shutdown()


def write_long_run(path: Path, events: int, *, batch: int = 8192) -> str:
    """A store with one complete run of about ``events`` events; its run id."""
    write_stream(path, run_events(0, max(1, (events - 2) // PER_ITERATION)), batch=batch)
    return run_id_of(0)


def write_stream(path: Path, events: Iterable[Event], *, batch: int = 8192) -> None:
    """A store of ``events``, exported ``batch`` at a time through one real sink."""
    sink = ParquetSink(path)
    pending: list[Event] = []
    try:
        for event in events:
            pending.append(event)
            if len(pending) >= batch:
                sink.export(pending)
                pending = []
        if pending:
            sink.export(pending)
    finally:
        sink.shutdown()


def decision_event(run: str, seq: int) -> Event:
    """Event ``seq`` of ``run`` in a decision-heavy mix, the shape a real run records:
    a route (a skill switch) every 8 events, fact injections, a model and a tool call,
    then a skill activation or, every 4th iteration, a refusal."""
    ts, it = DECISION_T0 + seq * 1000, seq // 8
    match seq % 8:
        case 0:
            move = CursorMove(by="route", from_skill=f"s{it % 3}", to=f"s{(it + 1) % 3}")
            return ContextEvaluated(run_id=run, seq=seq, ts=ts, iteration=it, active_count=3,
                                    skipped_count=1, evaluated_total=4, cursor_move=move,
                                    active_ids=("base", "fact-1", f"s{it % 3}"))
        case 1 | 2:
            return ContextInjected(run_id=run, seq=seq, ts=ts, iteration=it,
                                   slot="system-prompt", source="fact",
                                   content_hash=f"{seq % 5:064x}", content_summary="a policy",
                                   reason="fact 'fact-1' active", admitted_via="always",
                                   injection_id=f"fact-{seq % 5}", admitted_by=seq - 1)
        case 3:
            return LLMStart(run_id=run, seq=seq, ts=ts, iteration=it, provider="scripted",
                            model="tiny-1", request_hash=f"{it:064x}", messages_count=it,
                            step_id=f"llm#{it}")
        case 4:
            return LLMEnd(run_id=run, seq=seq, ts=ts, iteration=it, content="calling lookup",
                          response_hash=f"{it:063x}f", input_tokens=900, output_tokens=40,
                          step_id=f"llm#{it}")
        case 5:
            return ToolStart(run_id=run, seq=seq, ts=ts, iteration=it, tool_name="lookup",
                             tool_call_id=f"c{it}", args={"order": it})
        case 6:
            return ToolEnd(run_id=run, seq=seq, ts=ts, iteration=it, tool_call_id=f"c{it}",
                           tool_name="lookup", result=f"order {it}: shipped")
        case _:
            if it % 4 == 0:
                return SkillRejected(run_id=run, seq=seq, ts=ts, iteration=it,
                                     requested_id="billing", reason="unreachable",
                                     allowed=("triage",), current_skill_id="triage")
            return SkillActivated(run_id=run, seq=seq, ts=ts, iteration=it, skill_id="triage",
                                  reason="route", evidence_seq=seq - 7)


def write_decision_runs(path: Path, runs: int, per_run: int) -> None:
    """A store of ``runs`` runs (``gen-00000``...) of ``per_run`` :func:`decision_event`
    events each, written one run after another through a real sink."""
    write_stream(path, (decision_event(f"gen-{r:05d}", seq)
                        for r in range(runs) for seq in range(per_run)))


def write_many_runs(path: Path, runs: int, *, iterations: int = 3, together: int = 50,
                    start: int = 0, labelled: bool = False) -> None:
    """A store of ``runs`` short runs (numbered from ``start``), ``together`` of them
    interleaved per segment; ``labelled``: users, sessions, tags, releases, scores."""
    sink = ParquetSink(path)
    try:
        for first in range(start, start + runs, together):
            group = range(first, min(start + runs, first + together))
            pending: list[Event] = []
            for n in group:
                pending.extend(run_events(n, iterations, start_ns=T0 + n * 60 * 10**9,
                                          labelled=labelled))
            sink.export(pending)
    finally:
        sink.shutdown()


def one_run_per_segment(folder: Path, runs: int, iterations: int) -> Path:
    """``folder/store`` with ``runs`` runs of ``iterations`` iterations, each in its own
    segment (damage to one file touches one run); the store's path."""
    root = folder / "store"
    write_many_runs(root, runs, iterations=iterations, together=1)
    return root


def write_requests_run(path: Path, calls: int, request_chars: int) -> str:
    """A store with one run of ``calls`` model calls, each request ``request_chars``
    characters of its own (stored as a blob, as a real agent's growing prompts are)."""
    run = run_id_of(0)
    sink = ParquetSink(path)
    try:
        sink.export([RunStart(run_id=run, seq=0, ts=T0, user_message="a long conversation")])
        for first in range(0, calls, 512):
            sink.export([LLMStart(
                run_id=run, seq=1 + i, ts=T0 + 1 + i, iteration=1 + i, provider="scripted",
                model="model-a", request_hash=f"{i:064x}", messages_count=1 + i,
                request_ref=f'{{"call": {i}, "messages": "{"m" * request_chars}"}}')
                for i in range(first, min(calls, first + 512))])
        sink.export([RunEnd(run_id=run, seq=calls + 1, ts=T0 + calls + 1, iteration=calls,
                            final_content="done")])
    finally:
        sink.shutdown()
    return run
