"""A small store whose trends are known by hand (``tests/integration/test_store_trends.py``,
the lens's trends screen tests).

Four runs on two days (UTC), each with a model, a release, the skills it
activated, its tokens and its latency (``run.start`` to its end):

====  =================  =====  =======  ========  ======  =========  =========
run   start              model  release  skills    tokens  status     latency
====  =================  =====  =======  ========  ======  =========  =========
r1    2026-01-01 00:10   a      1.4      billing   15      complete   100 ms
r2    2026-01-01 00:40   b      1.5      refunds   30      failed     300 ms
r3    2026-01-01 05:00   a      1.4      both      0       incomplete —
r4    2026-01-02 12:00   a      1.5      —         7       complete   1000 ms
====  =================  =====  =======  ========  ======  =========  =========

Decisions (``skill.activated`` and ``route.decided`` rows): r1 2, r2 2, r3 3, r4 1.
"""

from __future__ import annotations

from pathlib import Path

from footprint.events import (
    Event,
    LLMEnd,
    LLMStart,
    RouteDecided,
    RunEnd,
    RunFailed,
    RunStart,
    SkillActivated,
)
from recorder import ParquetSink, Recorder

DAY1 = 1_767_225_600_000_000_000  # 2026-01-01 00:00 UTC
MIN = 60 * 10**9
MS = 10**6


def _run(n: int, start: int, *, model: str, release: str, skills: tuple[str, ...],
         tokens: tuple[int, int] | None, end: str, latency_ms: int) -> list[Event]:
    run = f"0190cccc-0000-7000-8000-{n:012d}"
    env = {"run_id": run, "turn": 0, "iteration": 1, "step_id": "engine#1"}
    out: list[Event] = [RunStart(run_id=run, seq=0, ts=start, user_message=f"r{n}",
                                 release=release)]
    for skill in skills:
        out.append(SkillActivated(**env, seq=len(out), ts=start + len(out),  # type: ignore[arg-type]
                                  skill_id=skill, reason="entry"))
    if tokens is not None:
        out.append(LLMStart(**env, seq=len(out), ts=start + len(out), provider="scripted",  # type: ignore[arg-type]
                            model=model, request_hash="0" * 64, messages_count=1,
                            tools_count=0))
        out.append(LLMEnd(**env, seq=len(out), ts=start + len(out), content="ok",  # type: ignore[arg-type]
                          response_hash="1" * 64, input_tokens=tokens[0],
                          output_tokens=tokens[1], model=model))
        out.append(RouteDecided(**env, seq=len(out), ts=start + len(out), chosen="final"))  # type: ignore[arg-type]
    at = start + latency_ms * MS
    if end == "complete":
        out.append(RunEnd(run_id=run, seq=len(out), ts=at, iteration=1, final_content="done"))
    elif end == "failed":
        out.append(RunFailed(run_id=run, seq=len(out), ts=at, iteration=1,
                             error_type="RunError", message="boom", stage="llm"))
    return out


def write_trends_store(path: Path) -> Path:
    """The store of the table above, at ``path``; ``path``."""
    runs = [
        _run(1, DAY1 + 10 * MIN, model="a", release="1.4", skills=("billing",),
             tokens=(10, 5), end="complete", latency_ms=100),
        _run(2, DAY1 + 40 * MIN, model="b", release="1.5", skills=("refunds",),
             tokens=(20, 10), end="failed", latency_ms=300),
        _run(3, DAY1 + 300 * MIN, model="a", release="1.4", skills=("billing", "refunds"),
             tokens=(0, 0), end="incomplete", latency_ms=0),
        _run(4, DAY1 + 36 * 60 * MIN, model="a", release="1.5", skills=(),
             tokens=(4, 3), end="complete", latency_ms=1000),
    ]
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        for events in runs:
            for event in events:
                recorder.emit(event)
    finally:
        recorder.close()
    return path
