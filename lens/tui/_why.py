"""The why screen: the answer's chain of custody, its pieces ranked — correlational only.

ANSWER ← the call that wrote it ← the pieces that LANDED in its prompt, each
with the event that ALLOWED it and where it was BORN. The ranking is word
overlap with the answer; a footer says, always, that only counterfactual
re-runs (``footprint why RUN --agent …``) may say "caused".
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from footprint.events import ContextInjected, Event, LLMEnd, LLMStart
from lens.explain._custody import Custody, Piece, answer_custody
from lens.tui._base import RunScreen
from lens.tui._model import request_messages
from lens.tui._reader import RunReader
from lens.tui._summary import clip

__all__ = ["WhyScreen", "causal_note", "chain_text", "piece_detail", "piece_prompt",
           "read_custody"]


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


def read_custody(reader: RunReader) -> Custody | None:
    """The answer's chain of custody, reading only the events on it (not the whole run)."""
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
    mine = {e.seq for e in events}
    admitting = [e.admitted_by for e in events if isinstance(e, ContextInjected)
                 and e.admitted_by is not None and e.admitted_by not in mine]
    events += reader.events_at(admitting) + _tool_events(reader, start)
    unique = sorted({e.seq: e for e in events}.values(), key=lambda e: e.seq)
    return answer_custody(unique, end.step_id)


def chain_text(custody: Custody | None) -> Text:
    """The top of the chain: the answer and the call that wrote it."""
    if custody is None:
        return Text("The run made no model call, so there is no answer to walk back from.",
                    style="dim")
    call = custody.call
    text = Text()
    text.append("ANSWER  ", style="bold reverse")
    text.append(f" {clip(custody.answer, 200)}\n", style="italic")
    brain = f" · brain {call.brain_via}" if call.brain_via else ""
    text.append(f"  ← written by {call.step_id} · {call.provider}/{call.model}{brain} · "
                f"iteration {call.iteration} (llm.start seq {call.seq})\n")
    text.append(f"  ← its prompt held {len(custody.pieces)} pieces, ranked by word overlap "
                "with the answer — ")
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


class WhyScreen(RunScreen):
    """Pieces on the left as a list; the chosen piece's text below; the causal note last."""

    NAME = "why"
    DEFAULT_CSS = """
    WhyScreen #chain { height: auto; padding: 0 1; }
    WhyScreen #pieces { height: 1fr; }
    WhyScreen #piece-box { height: 8; border-top: solid $panel; }
    WhyScreen #causal { height: 1; background: $warning 20%; padding: 0 1; }
    """

    def body(self) -> ComposeResult:
        yield Static(id="chain")
        yield OptionList(id="pieces")
        with VerticalScroll(id="piece-box"):
            yield Static(id="piece")
        yield Static(id="causal")

    def on_mount(self) -> None:
        self.custody: Custody | None = None
        self.reader = self.state.reader()
        self.query_one("#pieces", OptionList).focus()
        assert self.state.run_id is not None
        self.query_one("#causal", Static).update(causal_note(self.state.run_id))
        self._draw()

    def _draw(self) -> None:
        pieces = self.query_one("#pieces", OptionList)
        if self.custody is None:
            pieces.loading = True
            self.query_one("#chain", Static).update(
                Text("reading the answer's chain of custody…", style="dim italic"))
        reader = self.reader
        self.load("custody", lambda: read_custody(reader), self._drawn)

    def _drawn(self, custody: Custody | None) -> None:
        self.custody = custody
        listing = self.query_one("#pieces", OptionList)
        listing.loading = False
        if self.focused is None:
            listing.focus()
        pieces = self.custody.pieces if self.custody is not None else ()
        self.query_one("#chain", Static).update(chain_text(self.custody))
        listing = self.query_one("#pieces", OptionList)
        listing.set_options([Option(piece_prompt(i, p)) for i, p in enumerate(pieces, start=1)])
        listing.highlighted = 0 if pieces else None
        self._detail(0)

    def _detail(self, index: int | None) -> None:
        pieces = self.custody.pieces if self.custody is not None else ()
        box = self.query_one("#piece", Static)
        if index is None or index >= len(pieces):
            box.update(Text("(no piece)", style="dim"))
        else:
            box.update(piece_detail(pieces[index]))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._detail(event.option_index)

    def reload(self) -> None:
        super().reload()
        self._draw()
