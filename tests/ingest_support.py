"""Reading mapped runs back for the ingest tests, and comparing them with what the foreign
agent really did (:class:`tests.foreign_agents.Truth`) — the source of the README's
fidelity table."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreign_agents import FRAMEWORKS, SentCall, Truth, exporting

from footprint.events import (
    ContextInjected,
    Event,
    LLMEnd,
    LLMStart,
    RunEnd,
    RunSource,
    RunStart,
    ToolEnd,
    ToolStart,
)
from recorder import open_store
from recorder.ingest import Intake, Receiver

__all__ = ["COLUMNS", "Mapped", "fidelity_row", "fidelity_table", "mapped_calls", "record"]


@dataclass
class Mapped:
    truth: Truth
    store: Path
    runs: list[list[Event]]


def record(framework: str | Callable[..., Truth], store: Path, **options: Any) -> Mapped:
    """Run one framework's agent (by name, or the agent function itself, with its
    ``options``), exported over OTLP/HTTP to a receiver on 127.0.0.1."""
    agent = FRAMEWORKS[framework] if isinstance(framework, str) else framework
    receiver = Receiver(Intake(store), port=0).start()
    try:
        with exporting(receiver.endpoint) as provider:
            truth = agent(provider, **options)
    finally:
        receiver.stop()
    with open_store(store) as s:
        ids = [r[0] for r in s.rows("SELECT run_id FROM runs ORDER BY start_ns, run_id")]
        runs = [s.events(i) for i in ids]
    return Mapped(truth=truth, store=store, runs=runs)


def mapped_calls(runs: list[list[Event]]) -> list[SentCall]:
    """Every mapped model call, in the same shape as the truth's."""
    out = []
    for events in runs:
        ends = {e.step_id: e for e in events if isinstance(e, LLMEnd)}
        for start in (e for e in events if isinstance(e, LLMStart)):
            request = json.loads(start.request_ref or "{}")
            system = tuple(e.raw_content or "" for e in events
                           if isinstance(e, ContextInjected) and e.slot == "system-prompt"
                           and e.iteration == start.iteration and e.source == "base")
            msgs = request.get("messages", [])
            end = ends[start.step_id]
            out.append(SentCall(system=system, roles=tuple(m["role"] for m in msgs),
                                tool_results=tuple(m.get("tool_call_id", "") for m in msgs
                                                   if m["role"] == "tool"),
                                tools=tuple(t["name"] for t in request.get("tools", [])),
                                usage=(end.input_tokens, end.output_tokens)))
    return out


def tool_runs(runs: list[list[Event]]) -> list[tuple[str, dict[str, Any], str]]:
    out = []
    for events in runs:
        ends = {e.tool_call_id: e for e in events if isinstance(e, ToolEnd)}
        out += [(s.tool_name, dict(s.args), ends[s.tool_call_id].result)
                for s in events if isinstance(s, ToolStart)]
    return out


COLUMNS = ("model calls", "system instructions", "messages and roles", "tool results linked",
           "tool definitions", "tool calls and results", "usage", "answer", "conversation",
           "fidelity")


def _grade(got: list[Any], want: list[Any]) -> str:
    if got == want:
        return "yes"
    hits = sum(g == w for g, w in zip(got, want, strict=False))
    return "no" if hits == 0 else f"{hits}/{len(want)}"


def _conversation(m: Mapped) -> str:
    if m.truth.turns < 2:
        return "n/a (one turn)"
    starts = [next(e for e in r if isinstance(e, RunStart)) for r in m.runs]
    ids = {s.conversation_id for s in starts}
    turns = [s.turn for s in starts]
    return "yes" if len(ids) == 1 and None not in ids and turns == list(range(m.truth.turns)) \
        else "no"


def fidelity_row(m: Mapped) -> dict[str, str]:
    """Each column graded against the truth: ``yes`` (all equal), ``k/n`` or ``no``."""
    got, want = mapped_calls(m.runs), m.truth.calls
    answers = [next((e.final_content for e in r if isinstance(e, RunEnd)), None) for r in m.runs]
    source = next(e for e in m.runs[0] if isinstance(e, RunSource))
    return {
        "model calls": "yes" if len(got) == len(want) else f"{len(got)}/{len(want)}",
        "system instructions": _grade([c.system for c in got], [c.system for c in want]),
        "messages and roles": _grade([c.roles for c in got], [c.roles for c in want]),
        "tool results linked": _grade([c.tool_results for c in got],
                                      [c.tool_results for c in want]),
        "tool definitions": _grade([c.tools for c in got], [c.tools for c in want]),
        "tool calls and results": _grade(tool_runs(m.runs), m.truth.tool_runs),
        "usage": _grade([c.usage for c in got], [c.usage for c in want]),
        "answer": _grade(answers, m.truth.answers),
        "conversation": _conversation(m),
        "fidelity": f"{source.fidelity} ({source.dialect})",
    }


def fidelity_table(rows: dict[str, dict[str, str]]) -> str:
    """The README's fragment: one row per framework, graded by the tests."""
    lines = ["| framework | " + " | ".join(COLUMNS) + " |",
             "|---|" + "---|" * len(COLUMNS)]
    lines += [f"| {name} | " + " | ".join(row[c] for c in COLUMNS) + " |"
              for name, row in rows.items()]
    return "\n".join(lines) + "\n"
