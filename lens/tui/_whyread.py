"""What the why screen reads before it draws, and the causal search it runs. No Textual here.

* :func:`read_failure` — on a failed or unfinished run, the failing step: the
  ``run.error``, the model call that never ended (or the one the error names),
  the tool calls that ended in an error or never ended; the why screen walks
  the failing model call's custody as it walks an answer's.
* :func:`recorded_agent` — the ``Agent(factory=...)`` reference the run
  recorded on ``run.configured``.
* :func:`causal_search` — ``lens.explain`` ``why(...)`` with an agent, on the
  caller's thread; a ``cancelled()`` that turns true stops it at the next
  re-run (:class:`SearchCancelled`); the finished report is cached in the store.
* :func:`resend_search` — the same with the re-send tier (``footprint lens
  --provider``/``--base-url``): the recorded request re-sent without pieces, the
  search of a run taken in from another framework's trace (it has no agent).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text

from footprint.events import LLMEnd, LLMStart, RunConfigured, RunFailed, ToolEnd, ToolStart
from lens.explain._cache import CachedWhy, CacheUnreadable, cache_path, load_report, save_report
from lens.explain._report import WhyReport
from lens.tui._reader import RunReader
from lens.tui._state import Resend
from lens.tui._summary import clip

__all__ = ["SEARCH_OPTIONS", "Failure", "SearchCancelled", "agent_text", "causal_search",
           "failure_text", "find_cached", "no_agent_text", "quick_switches", "read_failure",
           "recorded_agent", "resend_search", "resend_text"]

SEARCH_OPTIONS: dict[str, Any] = {"step": None, "seeds": None, "alpha": 0.05, "budget": None}
"""The lens searches as ``footprint why RUN --agent REF`` does with no other flag."""
_EXAMPLE = "examples/planted/wrong_fact.py:make_agent"


class SearchCancelled(Exception):
    """The person cancelled the causal search (esc), or the screen or the lens went away."""


def no_agent_text(run_id: str, source: str | None = None) -> str:
    """What to pass for a causal search, when the lens has no agent to re-run (for a run
    taken in from another framework's trace, ``source`` says so: it never has one)."""
    if source is not None:
        return (f"Only counterfactual re-sends can say \"caused\": this run was {source}, so "
                f"there is no agent to re-run; open footprint lens {run_id[:13]} --provider "
                "FILE.py:FACTORY (or --base-url URL --model NAME) and press a to re-send its "
                "recorded request without each piece")
    return (f"Only counterfactual re-runs can say \"caused\", and they need the agent: open "
            f"footprint lens {run_id[:13]} --agent {_EXAMPLE} (your FILE.py:FACTORY or "
            "module:factory), or build it with Agent(factory='MODULE:ATTR') so each run "
            "records it")


def agent_text(agent: str) -> str:
    """The line under the ranking when the lens can re-run ``agent``."""
    return (f"Only counterfactual re-runs can say \"caused\": press a to run them (the causal "
            f"search) with agent {agent}; esc cancels")


def resend_text(resend: Resend) -> str:
    """The line under the ranking when the lens can re-send the recorded request."""
    return ("Only counterfactual re-sends can say \"caused\": press a to re-send the recorded "
            f"request without each piece (the causal search), {resend.ref}; esc cancels")


# ── the failing step ───────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """Why a run has no answer: its error (if it recorded one) and the calls left open or
    ended in an error after its last model call began."""

    status: str
    error: RunFailed | None
    open_call: LLMStart | None
    failed_tools: tuple[ToolEnd, ...]
    open_tools: tuple[ToolStart, ...]
    last_seq: int
    failed_call: LLMStart | None = None
    """The model call the run failed in: the one ``run.error`` names as its step, else the
    call left open (an ``llm.start`` with no ``llm.end``); ``None`` when no model call
    failed (a tool raised, or the engine between calls)."""

    @property
    def what_ended(self) -> str:
        """What ended the failing call: the run's error, or that it has not returned."""
        if self.error is not None:
            return f"{self.error.error_type}: {' '.join(self.error.message.split())}"
        return "no llm.end: the call has not returned (the run is going or its process stopped)"


def read_failure(reader: RunReader, status: str, last_seq: int) -> Failure | None:
    """The failing step of a ``failed`` or ``incomplete`` run (``None`` for a complete one),
    reading only the run's error and the events from its last model call on."""
    if status == "complete":
        return None
    error = next((e for e in reader.events_where("type = 'run.error'")
                  if isinstance(e, RunFailed)), None)
    last = reader.events_where(
        "seq = (SELECT max(seq) FROM _events_all WHERE run_id = ? AND type = 'llm.start')",
        [reader.run_id])
    start = next((e for e in last if isinstance(e, LLMStart)), None)
    since = start.seq if start is not None else -1
    tail = reader.events_where("seq >= ? AND type IN ('llm.end', 'tool.start', 'tool.end')",
                               [since])
    ended = {e.step_id for e in tail if isinstance(e, LLMEnd)}
    tool_ends = [e for e in tail if isinstance(e, ToolEnd)]
    done = {e.tool_call_id for e in tool_ends}
    open_call = start if start is not None and start.step_id not in ended else None
    return Failure(
        status=status, error=error, open_call=open_call,
        failed_tools=tuple(e for e in tool_ends if e.error or e.status == "failure"),
        open_tools=tuple(e for e in tail if isinstance(e, ToolStart)
                         and e.tool_call_id not in done),
        last_seq=last_seq, failed_call=_named_call(reader, error) or open_call)


def _named_call(reader: RunReader, error: RunFailed | None) -> LLMStart | None:
    """The model call ``error`` names as its step (an ingested trace's failing chat span),
    if it names one (the engine names its own step, ``engine#N``)."""
    if error is None or not error.step_id or not error.step_id.startswith("llm"):
        return None
    found = reader.events_where("type = 'llm.start' AND step_id = ?", [error.step_id])
    return next((e for e in found if isinstance(e, LLMStart)), None)


def failure_text(f: Failure) -> Text:
    """The failing step, first: the error, then the call that raised or never ended."""
    text = Text()
    if f.status == "failed":
        text.append("RUN FAILED ", style="bold reverse red")
        if f.error is not None:
            text.append(f" {f.error.error_type} at stage {f.error.stage}: "
                        f"{clip(f.error.message, 400)} (run.error seq {f.error.seq})")
    else:
        text.append("RUN UNFINISHED ", style="bold reverse yellow")
        text.append(f" no run.end and no run.error: the run is still going or its process "
                    f"stopped (last event seq {f.last_seq})")
    call = f.failed_call or f.open_call
    if call is not None:
        verb = "raised" if f.status == "failed" else "has not returned"
        ended = (", no llm.end" if f.open_call is not None
                 and call.step_id == f.open_call.step_id else "")
        text.append(f"\n  ← the model call that {verb}: {call.step_id} · "
                    f"{call.provider}/{call.model} · iteration "
                    f"{call.iteration} (llm.start seq {call.seq}{ended})")
    for t in f.failed_tools:
        text.append(f"\n  ← tool {t.tool_name} #{t.tool_call_id} ended in an error: "
                    f"{clip(t.result, 120)} (tool.end seq {t.seq})")
    for s in f.open_tools:
        text.append(f"\n  ← tool {s.tool_name} #{s.tool_call_id} never ended "
                    f"(tool.start seq {s.seq})")
    return text


# ── the agent and the search ───────────────────────────────────────────────


def recorded_agent(reader: RunReader) -> str | None:
    """The ``factory`` the run's agent was built with (``run.configured``), if any."""
    for e in reader.events_where("type = 'run.configured'"):
        if isinstance(e, RunConfigured):
            factory = e.options.get("factory")
            return factory if isinstance(factory, str) and factory else None
    return None


def find_cached(root: Path, run_id: str, agent: str | None) -> tuple[CachedWhy | None,
                                                                      str | None]:
    """The cached report for ``agent`` (without one: the run's newest), and a notice when a
    cache file had to be ignored."""
    if agent is not None:
        paths = [cache_path(root, run_id, agent, SEARCH_OPTIONS)]
    else:
        found = (root / "why").glob(f"{run_id}.*.json")
        paths = sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)[:1]
    for path in paths:
        try:
            return load_report(path), None
        except CacheUnreadable as exc:
            return None, str(exc)
    return None, None


_SWITCH_S = 0.001
_switching = threading.Lock()
_running: list[float] = []  # the interpreter's own switch interval, once per running search


@contextmanager
def quick_switches() -> Iterator[None]:
    """While a search runs on a thread, the UI thread gets the interpreter back within 1 ms
    (Python's default lets a busy thread keep it 5 ms at a time: a key press waited ~4 such
    turns); the interval is restored when the last running search ends."""
    with _switching:
        _running.append(sys.getswitchinterval())
        sys.setswitchinterval(min(_running[0], _SWITCH_S))
    try:
        yield
    finally:
        with _switching:
            normal = _running[0]
            _running.pop()
            if not _running:
                sys.setswitchinterval(normal)


def causal_search(root: Path, run_id: str, agent: str, *,
                  tick: Callable[[int, int | None, str], None],
                  cancelled: Callable[[], bool]) -> tuple[WhyReport, Path]:
    """Rebuild ``agent``, search run ``run_id`` by counterfactual re-runs, cache the report.

    The search opens the store by itself (its own reader: the lens's reads never wait for
    it). ``tick(done, total, what)`` hears each re-run; once ``cancelled()`` is true the
    next re-run raises :class:`SearchCancelled` instead.
    """
    from footprint.events import NullSink
    from lens.explain._why import why
    from lens.playback._agent_ref import build_agent, load_target

    built = build_agent(load_target(agent), NullSink())

    def progress(done: int, total: int | None, what: str) -> None:
        if cancelled():
            raise SearchCancelled(f"cancelled before re-run {done}")
        tick(done, total, what)

    with quick_switches():
        report = why(str(root), run_id, agent=built, progress=progress, **SEARCH_OPTIONS)
    if cancelled():
        raise SearchCancelled("cancelled as the search finished")
    path = cache_path(root, run_id, agent, SEARCH_OPTIONS)
    save_report(path, report, agent=agent, options=SEARCH_OPTIONS)
    return report, path


def resend_search(root: Path, run_id: str, resend: Resend, *,
                  tick: Callable[[int, int | None, str], None],
                  cancelled: Callable[[], bool]) -> tuple[WhyReport, Path]:
    """:func:`causal_search` in the re-send tier: the explained call's recorded request
    re-sent through ``resend`` without pieces; the report is cached under ``resend.ref``."""
    from lens.explain._resend_why import why

    def progress(done: int, total: int | None, what: str) -> None:
        if cancelled():
            raise SearchCancelled(f"cancelled before re-send {done}")
        tick(done, total, what)

    with quick_switches():
        report = why(str(root), run_id, resend=resend.provider, base_url=resend.base_url,
                     model=resend.model, progress=progress, **SEARCH_OPTIONS)
    if cancelled():
        raise SearchCancelled("cancelled as the search finished")
    path = cache_path(root, run_id, resend.ref, SEARCH_OPTIONS)
    save_report(path, report, agent=resend.ref, options=SEARCH_OPTIONS)
    return report, path
