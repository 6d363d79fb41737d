"""The why screen: the answer's chain of custody, its pieces ranked — and, with an agent,
the causal search run in place.

ANSWER ← the call that wrote it ← the pieces that LANDED in its prompt, each
with the event that ALLOWED it and where it was BORN. The ranking is word
overlap with the answer: resemblance only. With an agent reference
(``footprint lens --agent FILE.py:FACTORY``, or the ``Agent(factory=...)`` the
run recorded) ``a`` runs the counterfactual search (``lens.explain``
``why``) on a thread worker with a progress bar; ``esc`` cancels it. A run with
no agent — one taken in from another framework's trace — is searched by
re-sending its recorded request without pieces (``footprint lens --provider
FILE.py:FACTORY`` or ``--base-url URL --model NAME``), as ``why --resend``. The
finished report replaces the ranking: verdicts in the suspect list, the
headline and the whole report as ``footprint why`` prints them; it is cached
in the store (``<store>/why/``) so reopening shows it at once. On a failed or
unfinished run the screen leads with the failing step, and when a model call
failed (raised, or never returned) walks that call's chain instead of an
answer's: the pieces that landed in its prompt, ranked by overlap with the error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from footprint.events import ContextInjected, Event, LLMEnd, LLMStart
from lens.explain._cache import CachedWhy
from lens.explain._custody import Custody, Piece, answer_custody, failing_custody
from lens.explain._report import Suspect, WhyReport
from lens.tui._base import RunScreen
from lens.tui._model import request_messages
from lens.tui._reader import RunReader
from lens.tui._state import LensState, Resend
from lens.tui._summary import clip
from lens.tui._verdict import headline_text, suspect_prompt
from lens.tui._whyread import (
    Failure,
    SearchCancelled,
    agent_text,
    causal_search,
    failure_text,
    find_cached,
    no_agent_text,
    read_failure,
    recorded_agent,
    resend_search,
    resend_text,
)
from lens.tui._whysentence import report_lines

__all__ = ["WhyRead", "WhyScreen", "causal_note", "chain_text", "chain_top", "piece_detail",
           "piece_prompt", "prompt_line", "read_custody", "read_why"]


def _tool_events(reader: RunReader, start: LLMStart) -> list[Event]:
    """The tool calls whose results the answering request carried (its turn's, if not kept)."""
    messages = request_messages(start)
    if messages is None:
        return reader.events_where("type IN ('tool.start', 'tool.end') AND turn = ? AND seq < ?",
                                   [start.turn, start.seq])
    ids = [str(m["tool_call_id"]) for m in messages
           if m.get("role") == "tool" and m.get("tool_call_id")]
    if not ids:
        return []
    return reader.events_where("type IN ('tool.start', 'tool.end') AND tool_call_id IN ?", [ids])


def read_custody(reader: RunReader, failure: Failure | None = None) -> Custody | None:
    """The answer's chain of custody, reading only the events on it (not the whole run);
    on a run whose model call failed (``failure.failed_call``), that call's instead."""
    call = failure.failed_call if failure is not None else None
    if failure is not None and call is not None:
        events = _chain_events(reader, call)
        return failing_custody(events, call.step_id, failure.what_ended)
    last = reader.events_where(
        "seq = (SELECT max(seq) FROM _events_all WHERE run_id = ? AND type = 'llm.end')",
        [reader.run_id])
    end = next((e for e in last if isinstance(e, LLMEnd)), None)
    if end is None:
        return None
    events = reader.events_where("iteration = ? OR type = 'injection.declared'",
                                 [end.iteration])
    start = next((e for e in events if isinstance(e, LLMStart) and e.step_id == end.step_id),
                 None)
    if start is None:
        return None
    return answer_custody(_chain_events(reader, start, events), end.step_id)


def _chain_events(reader: RunReader, start: LLMStart,
                  events: list[Event] | None = None) -> list[Event]:
    """The events on the chain of the call ``start``: its iteration's, the declarations,
    the events that admitted its pieces and the tool calls it read (``events``: the
    iteration's and the declarations, when already read)."""
    if events is None:
        events = reader.events_where("iteration = ? OR type = 'injection.declared'",
                                     [start.iteration])
    mine = {e.seq for e in events}
    admitting = [e.admitted_by for e in events if isinstance(e, ContextInjected)
                 and e.admitted_by is not None and e.admitted_by not in mine]
    events = events + reader.events_at(admitting) + _tool_events(reader, start)
    return sorted({e.seq: e for e in events}.values(), key=lambda e: e.seq)


def chain_text(custody: Custody | None, *, failed: bool = False) -> Text:
    """The top of the chain: the answer (``failed``: the run's last reply, not an answer)
    and the call that wrote it — or the call that failed and its error."""
    if custody is None:
        return Text("The run made no model call, so there is no answer to walk back from.",
                    style="dim")
    call = custody.call
    brain = f" · brain {call.brain_via}" if call.brain_via else ""
    text = Text()
    if custody.error is not None:
        text.append("FAILED CALL ", style="bold reverse red")
        text.append(f" ✗ {clip(custody.error, 200)}\n", style="red")
        text.append(f"  ← the model call that failed: {call.step_id} · {call.provider}/"
                    f"{call.model}{brain} · iteration {call.iteration} (llm.start seq "
                    f"{call.seq}, no reply)\n")
        text.append_text(prompt_line(custody))
        return text
    text.append("LAST REPLY " if failed else "ANSWER  ", style="bold reverse")
    text.append(f" {clip(custody.answer, 200)}\n", style="italic")
    text.append(f"  ← written by {call.step_id} · {call.provider}/{call.model}{brain} · "
                f"iteration {call.iteration} (llm.start seq {call.seq})\n")
    text.append_text(prompt_line(custody))
    return text


def prompt_line(custody: Custody) -> Text:
    """``← its prompt held N pieces, ranked by word overlap with the answer`` (or, for a
    call that failed, with its error, naming the tool results it read) — correlational."""
    text = Text(f"  ← its prompt held {len(custody.pieces)} pieces")
    if custody.error is not None:
        reads = ", ".join(t.label for t in custody.tools[:3])
        more = f" and {len(custody.tools) - 3} more" if len(custody.tools) > 3 else ""
        count = len(custody.tools)
        text.append(f" and read {count} tool result{'' if count == 1 else 's'} ({reads}{more})"
                    if count else " and it read no tool result")
    text.append(f", ranked by word overlap with the "
                f"{'answer' if custody.error is None else 'error'} — ")
    text.append("CORRELATIONAL", style="bold yellow")
    text.append(" (resemblance, not cause)")
    return text


def piece_prompt(rank: int, piece: Piece) -> Text:
    """``rank. label score`` then ``LANDED seq · ALLOWED … · BORN seq``."""
    text = Text()
    text.append(f"{rank:>2}. {piece.label:<34}", style="bold")
    text.append(f" overlap {piece.score:.2f}", style="yellow")
    born = f"BORN seq {piece.born.seq}" if piece.born is not None else "BORN (not declared)"
    text.append(f"\n    LANDED seq {piece.landed.seq} · ALLOWED {piece.allowed_text()} · {born}",
                style="dim")
    return text


def piece_detail(piece: Piece) -> Text:
    """The selected piece as the model saw it, with its hash and reason."""
    e = piece.landed
    text = Text()
    text.append(f"{piece.label} · {e.slot} #{e.position} · hash {e.content_hash[:16]}…\n",
                style="bold")
    text.append(f"reason: {e.reason}\n", style="dim")
    text.append(e.raw_content if e.raw_content is not None else f"{e.content_summary} "
                "(text redacted; the hash still joins)")
    return text


def causal_note(run_id: str) -> str:
    """The line that never collapses: who may say 'caused'."""
    return (f"Only counterfactual re-runs can say \"caused\": "
            f"footprint why {run_id[:13]} --agent module:factory")


_TICK_S = 0.1
"""The search's progress reaches the screen at most this often."""


# ── what the screen reads ──────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class WhyRead:
    """Everything the why screen draws from the store, read on one worker."""

    custody: Custody | None
    failure: Failure | None
    agent: str | None
    cached: CachedWhy | None
    cache_notice: str | None
    resend: Resend | None = None
    """Set when the search re-sends the recorded request (no agent to re-run, or the run
    was taken in from another framework's trace)."""
    source: str | None = None
    """For a run taken in from another framework's trace, what its ``run.source`` says."""

    @property
    def searcher(self) -> str | None:
        """What the search runs with, as the cache keys it and the screen names it."""
        return self.resend.ref if self.resend is not None else self.agent


def read_why(state: LensState, reader: RunReader) -> WhyRead:
    """The chain of custody, the failing step, the agent to re-run (or where to re-send the
    recorded request) and a cached report."""
    head = state.head
    failure = None if head is None else read_failure(reader, head.status, head.last_seq)
    agent = state.agent or recorded_agent(reader)
    source = head.source if head is not None else None
    resend = state.resend if state.resend is not None and (
        agent is None or source is not None) else None
    cached, notice = find_cached(state.store.root, reader.run_id,
                                 resend.ref if resend is not None else agent)
    return WhyRead(custody=read_custody(reader, failure), failure=failure, agent=agent,
                   cached=cached, cache_notice=notice, resend=resend, source=source)


def chain_top(read: WhyRead | None, report: WhyReport | None) -> Text:
    """The screen's top: a failed run's failing step first, then the search's headline or
    the chain (for a model call that failed, its prompt: the failure named the call)."""
    failure, custody = (read.failure, read.custody) if read is not None else (None, None)
    chain = Text()
    if failure is not None:
        chain.append_text(failure_text(failure))
        chain.append("\n")
    if report is not None:
        chain.append_text(headline_text(report))
    elif failure is not None and custody is not None and custody.error is not None:
        chain.append_text(prompt_line(custody))
    elif read is None or failure is None or custody is not None:
        chain.append_text(chain_text(custody, failed=failure is not None))
    chain.rstrip()
    return chain


def _named(searcher: str) -> str:
    """``agent REF``, or the re-send as :attr:`Resend.ref` words it."""
    return searcher if searcher.startswith("re-send via ") else f"agent {searcher}"


class WhyScreen(RunScreen):
    """The chain on top; pieces (or, after a search, suspects with verdicts) as a list; the
    chosen piece (or the whole report) below; the agent line last."""

    NAME = "why"
    BINDINGS = [  # noqa: RUF012
        Binding("a", "search", "Causal search"),
        Binding("escape", "back", "Back / cancel search"),
    ]
    DEFAULT_CSS = """
    WhyScreen #chain { height: auto; max-height: 10; padding: 0 1; }
    WhyScreen #search { height: 1; padding: 0 1; display: none; }
    WhyScreen #search.-running { display: block; }
    WhyScreen #search-what { width: 1fr; padding: 0 1; }
    WhyScreen #pieces { height: 1fr; }
    WhyScreen #piece-box { height: 8; border-top: solid $panel; }
    WhyScreen.-report #piece-box { height: 2fr; }
    WhyScreen #causal { height: auto; background: $warning 20%; padding: 0 1; }
    """

    def body(self) -> ComposeResult:
        yield Static(id="chain")
        with Horizontal(id="search"):
            yield ProgressBar(id="progress", show_eta=False)
            yield Static(id="search-what")
        yield OptionList(id="pieces")
        with VerticalScroll(id="piece-box"):
            yield Static(id="piece")
        yield Static(id="causal")

    def on_mount(self) -> None:
        self.read: WhyRead | None = None
        self.report: WhyReport | None = None
        self.report_note = ""
        self.search: Worker[tuple[WhyReport, Path]] | None = None
        self._notices: set[str] = set()
        self.reader = self.state.reader()
        self.query_one("#pieces", OptionList).focus()
        self._draw()

    @property
    def custody(self) -> Custody | None:
        return self.read.custody if self.read is not None else None

    @property
    def searching(self) -> bool:
        return self.search is not None and not self.search.is_finished

    def _draw(self) -> None:
        if self.read is None:
            self.query_one("#pieces", OptionList).loading = True
            self.query_one("#chain", Static).update(
                Text("reading the answer's chain of custody…", style="dim italic"))
        state, reader = self.state, self.reader
        self.load("custody", lambda: read_why(state, reader), self._drawn)

    def _drawn(self, read: WhyRead) -> None:
        self.read = read
        if read.cache_notice is not None and read.cache_notice not in self._notices:
            self._notices.add(read.cache_notice)
            self.notify(read.cache_notice, title="why cache", severity="warning")
        if read.cached is not None and not self.searching:
            self.report = read.cached.report
            self.report_note = (f"from the cache: computed {read.cached.computed_at} with "
                                f"{_named(read.cached.agent)} · a searches again")
        listing = self.query_one("#pieces", OptionList)
        listing.loading = False
        if self.focused is None:
            listing.focus()
        self._paint()

    def _paint(self) -> None:
        read, report = self.read, self.report
        chain = chain_top(read, report)
        self.query_one("#chain", Static).update(chain)
        self.set_class(report is not None, "-report")
        listing = self.query_one("#pieces", OptionList)
        if report is not None:
            listing.set_options([Option(suspect_prompt(s, report)) for s in report.suspects])
            self.query_one("#piece", Static).update(Text("\n").join(report_lines(report)))
        else:
            pieces = self.custody.pieces if self.custody is not None else ()
            listing.set_options([Option(piece_prompt(i, p))
                                 for i, p in enumerate(pieces, start=1)])
        listing.highlighted = 0 if listing.option_count else None
        self._detail(listing.highlighted)
        self._agent_line()

    def _agent_line(self) -> None:
        assert self.state.run_id is not None
        agent = self.read.agent if self.read is not None else self.state.agent
        resend = self.read.resend if self.read is not None else None
        if self.report is not None:
            line = self.report_note
        elif resend is not None:
            line = resend_text(resend)
        elif agent is not None and self._source() is None:
            line = agent_text(agent)
        else:
            line = no_agent_text(self.state.run_id, self._source())
        self.query_one("#causal", Static).update(line)

    def _source(self) -> str | None:
        if self.read is not None:
            return self.read.source
        return self.state.head.source if self.state.head is not None else None

    def _detail(self, index: int | None) -> None:
        box = self.query_one("#piece", Static)
        if self.report is not None:
            if index is not None and index < len(self.report.suspects):
                self._report_at(self.report.suspects[index])
            return
        pieces = self.custody.pieces if self.custody is not None else ()
        if index is None or index >= len(pieces):
            box.update(Text("(no piece)", style="dim"))
        else:
            box.update(piece_detail(pieces[index]))

    def _report_at(self, suspect: Suspect) -> None:
        """Scroll the report to ``suspect`` (to its top for the first one: the header)."""
        assert self.report is not None
        lines = [line.plain for line in report_lines(self.report)]
        mark = f"  {suspect.rank:>2}. [{suspect.kind}]"
        at = 0 if suspect is self.report.suspects[0] else next(
            (i for i, line in enumerate(lines) if line.startswith(mark)), 0)
        self.query_one("#piece-box", VerticalScroll).scroll_to(y=at, animate=False)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._detail(event.option_index)

    # ── the causal search ───────────────────────────────────────────────────

    def action_search(self) -> None:
        """Start the counterfactual search on a thread worker (one at a time)."""
        if self.searching:
            self.notify("a causal search is running; esc cancels it", severity="warning")
            return
        agent = self.read.agent if self.read is not None else self.state.agent
        resend = self.read.resend if self.read is not None else None
        if (resend is None and (agent is None or self._source() is not None)) \
                or self.state.run_id is None:
            self.notify(no_agent_text(self.state.run_id or "RUN", self._source()),
                        severity="warning", timeout=10)
            return
        root, run_id = self.state.store.root, self.state.run_id
        how: str | Resend = resend if resend is not None else str(agent)
        self.query_one("#progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#search-what", Static).update(
            f"starting the search with {_named(resend.ref if resend else str(agent))}…")
        self.query_one("#search").add_class("-running")
        self.search = self.run_worker(lambda: self._searching(root, run_id, how),
                                      name="why-search", group="why-search", thread=True,
                                      exclusive=True, exit_on_error=False)

    def _searching(self, root: Path, run_id: str, how: str | Resend
                   ) -> tuple[WhyReport, Path]:
        """On the worker: the search; each re-run's progress marshalled to the UI thread."""
        worker = get_current_worker()
        shown = [0.0]

        def tick(done: int, total: int | None, what: str) -> None:
            now = time.monotonic()  # a repaint per re-run would slow the keys: ≤ 10 a second
            if not worker.is_cancelled and now - shown[0] >= _TICK_S:
                shown[0] = now
                self.app.call_from_thread(self._ticked, done, total, what)

        if isinstance(how, Resend):
            return resend_search(root, run_id, how, tick=tick,
                                 cancelled=lambda: worker.is_cancelled)
        return causal_search(root, run_id, how, tick=tick,
                             cancelled=lambda: worker.is_cancelled)

    def _ticked(self, done: int, total: int | None, what: str) -> None:
        self.query_one("#progress", ProgressBar).update(total=total, progress=done)
        self.query_one("#search-what", Static).update(
            f"re-run {done}{f'/{total}' if total else ''}: {clip(what, 80)}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.search or not event.worker.is_finished:
            return
        self.query_one("#search").remove_class("-running")
        if event.state == WorkerState.SUCCESS and not event.worker.is_cancelled:
            report, path = event.worker.result  # type: ignore[misc]
            self.report = report
            searcher = self.read.searcher if self.read is not None else self.state.agent
            self.report_note = (f"computed with {_named(str(searcher))} · cached in "
                                f"{path.parent.name}/{path.name}")
            self._paint()
        elif event.state == WorkerState.ERROR and not isinstance(event.worker.error,
                                                                  SearchCancelled):
            self.notify(f"the causal search stopped: {clip(str(event.worker.error), 160)}",
                        severity="error", timeout=10)

    async def action_back(self) -> None:
        """Cancel a running search; otherwise back to the timeline."""
        if self.searching and self.search is not None:
            self.search.cancel()
            self.query_one("#search").remove_class("-running")
            self.notify("causal search cancelled", severity="information")
            return
        await super().action_back()

    def reload(self) -> None:
        super().reload()
        self._draw()
