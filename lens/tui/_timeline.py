"""The timeline: iteration strip · what the model saw (System · Messages · Tools) · inspector.

The strip is line-virtualized over the run's outline (one grouped query); its
lines are fetched 64 iterations at a time for what is on screen. The selected
iteration's events are read on a worker when it is selected, and its
neighbours right after, so stepping through a million-event run stays instant.
"""

from __future__ import annotations

from collections import OrderedDict

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from lens.playback._terminal import terminal_safe
from lens.tui._base import RunScreen, update_fitted
from lens.tui._lines import VirtualList
from lens.tui._model import SLOT_TITLES, SLOTS, Block, Iteration
from lens.tui._reader import Failure, IterationHead, Outline, RunReader
from recorder.store._prices import usd

__all__ = ["IterationStrip", "TimelineScreen", "block_prompt", "failure_text", "strip_segments"]

FLAVOR_COLOURS = {
    "base": "grey70", "skill": "magenta", "steering": "cyan", "fact": "yellow",
    "instructions": "green", "registry": "grey62", "memory": "blue", "rag": "blue",
    "user": "bright_white", "assistant": "bright_yellow", "tool-result": "bright_blue",
}
_PAGE = 64
_KEEP = 64
_BOLD, _TOOLS, _DIM = Style(bold=True), Style(color="bright_blue"), Style(dim=True)
_WARN = Style(color="red", bold=True)


def strip_segments(head: IterationHead, part: int) -> list[Segment]:
    """Two lines per iteration: the cursor move, then tools, refusals and tokens."""
    if part == 0:
        move = (f"{head.from_skill or '∅'} → {head.to_skill or '∅'} ({head.by})" if head.moved
                else "no cursor move")
        return [Segment(f"#{head.number:<3}", _BOLD), Segment(move)]
    out = [Segment("    "), Segment(", ".join(head.tools) or "no tools", _TOOLS)]
    if head.refusals:
        out.append(Segment(f" ⚠{head.refusals} refused", _WARN))
    out.append(Segment(f" · {head.tokens} tok", _DIM))
    return [*out, Segment(" ✗ failed", _WARN)] if head.failed else out


class IterationStrip(VirtualList):
    """One two-line item per iteration of the outline; heads arrive by the page."""

    DEFAULT_CSS = "IterationStrip { height: 1fr; }"
    item_height = 2
    width = 0

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.outline = Outline((), (), ())
        self.heads: dict[int, IterationHead] = {}

    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        head = self.heads.get(self.outline.numbers[index])
        return None if head is None else strip_segments(head, part)


def block_prompt(block: Block) -> Text:
    """The block's label line (coloured by flavor), then its text as the model saw it."""
    text = Text()
    text.append(block.label, style=f"bold {FLAVOR_COLOURS.get(block.flavor, 'white')}")
    text.append("\n")
    text.append(block.text)
    return text


def _divided(options: list[Option]) -> list[Option | None]:
    """A divider line after every option (dividers do not shift option indices)."""
    out: list[Option | None] = []
    for option in options:
        out += [option, None]
    return out[:-1]


def _seen_title(it: Iteration, failure: Failure | None = None,
                cost: tuple[float | None] | None = None) -> Text:
    """The centre's title; ``cost`` (once read) as a 1-tuple: the iteration's USD or ``None``
    for an unpriced model."""
    text = Text("What the model saw", style="bold")
    call = it.call
    if call is None:
        text.append(f" — iteration {it.number} made no model call", style="dim")
    else:
        brain = f", brain {call.brain_via}" if call.brain_via else ""
        skill = f" {call.brain_skill_id!r}" if call.brain_skill_id else ""
        text.append(f" — iteration {it.number} · {call.step_id} · {call.provider}/"
                    f"{call.model}{brain}{skill} · llm.start seq {call.seq}")
        if cost is not None:
            text.append(f" · {usd(cost[0])}", style="dim" if cost[0] is None else "green")
    if failure is not None and failure.iteration == it.number:
        text.append(f" · ✗ {failure.step} failed here", style="bold red")
    return text


def failure_text(failure: Failure) -> Text:
    """The run's error, whole: where it failed (step, iteration), its type and message."""
    e = failure.error
    text = Text()
    text.append("✗ failed ", style="bold red")
    text.append(f"at {failure.step} (iteration {e.iteration}, stage {e.stage}, "
                f"seq {e.seq}) · {e.error_type}", style="bold")
    text.append(" · e: go there\n", style="dim")
    text.append(terminal_safe(e.message), style="red")
    return text


def inspector_text(block: Block | None) -> Text:
    """Every recorded field of the selected block, one per line."""
    if block is None:
        return Text("(no block selected)", style="dim")
    text = Text()
    text.append("inspector\n", style="bold underline")
    for key, value in block.details:
        text.append(f"{key}: ", style="bold")
        text.append(f"{value}\n")
    return text


class TimelineScreen(RunScreen):
    """Home of a run: ``←/→`` or ``[``/``]`` step iterations, ``g``/``G`` first/last."""

    NAME = "timeline"
    DEFAULT_CSS = """
    TimelineScreen #strip { width: 40; height: 1fr; border-right: solid $panel; }
    TimelineScreen #centre { width: 1fr; }
    TimelineScreen #seen-title { height: auto; padding: 0 1; }
    TimelineScreen #failure-box { height: auto; max-height: 12;
                                  border-bottom: solid $error; display: none; }
    TimelineScreen #failure { height: auto; padding: 0 1; display: none; }
    TimelineScreen #inspector-box { width: 38; border-left: solid $panel; padding: 0 1; }
    TimelineScreen TabbedContent, TimelineScreen TabPane { height: 1fr; }
    TimelineScreen TabPane OptionList { height: 1fr; }
    """
    BINDINGS = [  # noqa: RUF012
        Binding("left,left_square_bracket", "step(-1)", "Prev iter", key_display="←/[",
                priority=True),
        Binding("right,right_square_bracket", "step(1)", "Next iter", key_display="→/]",
                priority=True),
        Binding("g", "jump(0)", "First"),
        Binding("G", "jump(-1)", "Last"),
        Binding("1", "tab('system-prompt')", "System", show=False),
        Binding("2", "tab('messages')", "Messages", show=False),
        Binding("3", "tab('tools')", "Tools", show=False),
        Binding("e", "failure", "Failed step"),
    ]

    def body(self) -> ComposeResult:
        with Horizontal():
            yield IterationStrip(id="strip")
            with Vertical(id="centre"):
                with VerticalScroll(id="failure-box"):  # a long error scrolls, whole
                    yield Static(id="failure")
                yield Static(id="seen-title")
                with TabbedContent(id="seen"):
                    for slot in SLOTS:
                        with TabPane(SLOT_TITLES[slot], id=f"tab-{slot}"):
                            yield OptionList(id=f"blocks-{slot}")
            with VerticalScroll(id="inspector-box"):
                yield Static(id="inspector")

    def on_mount(self) -> None:
        self.index = -1
        self.shown: Iteration | None = None
        self._filled: set[str] = set()
        """The slots whose list holds ``shown``'s blocks."""
        self.details: OrderedDict[int, Iteration] = OrderedDict()
        self.failure: Failure | None = None
        self.costs: dict[int, tuple[float | None]] = {}
        """USD per iteration number, read after the iteration shows (prices load slowly)."""
        self.reader: RunReader = self.state.reader()
        strip = self.query_one(IterationStrip)
        strip.on_missing = self._want_heads
        strip.focus()
        self._read_outline(live=False)
        self._read_failure()

    # ── the run's failure ────────────────────────────────────────────────────
    def _read_failure(self) -> None:
        if self.state.head is not None and self.state.head.status == "failed":
            self.load("failure", self.reader.failure, self._failure_read)

    def _failure_read(self, failure: Failure | None) -> None:
        self.failure = failure
        box = self.query_one("#failure", Static)
        box.display = self.query_one("#failure-box").display = failure is not None
        if failure is not None:
            box.update(failure_text(failure))
        if self.shown is not None:
            self._title(_seen_title(self.shown, failure, self.costs.get(self.shown.number)))
        self.refresh_bindings()

    def _read_cost(self, it: Iteration) -> None:
        index = self.index
        first, last = self.outline.first_seq[index], self.outline.last_seq[index]

        def done(cost: float | None) -> None:
            self.costs[it.number] = (cost,)
            if self.shown is it:
                self._title(_seen_title(it, self.failure, (cost,)))

        self.load("cost", lambda: self.reader.cost(it, first, last), done)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``e`` (to the failing iteration) only shows for a failed run."""
        return self.failure is not None if action == "failure" else True

    def action_failure(self) -> None:
        if self.failure is not None and self.failure.iteration in self.outline.numbers:
            self.select(list(self.outline.numbers).index(self.failure.iteration))

    @property
    def outline(self) -> Outline:
        return self.query_one(IterationStrip).outline

    def _read_outline(self, *, live: bool) -> None:
        strip = self.query_one(IterationStrip)
        if not live:
            strip.loading = True
            self.query_one("#seen-title", Static).update(
                Text(f"reading the outline of {self.state.head.events if self.state.head else 0:,}"
                     " events…", style="dim italic"))
        self.load("outline", self.reader.outline, lambda o: self._outline_read(o, live))

    def _outline_read(self, outline: Outline, live: bool) -> None:
        strip = self.query_one(IterationStrip)
        stay = live and 0 <= self.index < len(strip.outline) - 1
        strip.outline, strip.heads = outline, {}
        strip.loading = False
        if self.focused is None:
            strip.focus()
        strip.set_count(len(outline), home=not live)
        self.details.clear()
        self.costs.clear()
        self.select(self.index if stay else (-1 if live else 0), force=True)

    def _want_heads(self, first: int, last: int) -> None:
        numbers = self.outline.numbers
        lo = numbers[max(0, first - _PAGE // 4)]
        hi = numbers[min(len(numbers) - 1, max(last, first + _PAGE))]
        reader, strip = self.reader, self.query_one(IterationStrip)

        def done(heads: dict[int, IterationHead]) -> None:
            strip.heads.update(heads)
            for n in range(lo, hi + 1):  # an iteration with no events of its own still paints
                strip.heads.setdefault(n, IterationHead(number=n))
            strip.refresh()

        self.load("heads", lambda: reader.heads(lo, hi), done)

    # ── the selected iteration ───────────────────────────────────────────────
    def select(self, index: int, *, force: bool = False) -> None:
        """Show iteration ``index`` (0-based; negative counts from the end)."""
        outline = self.outline
        if not len(outline):
            self.query_one("#seen-title", Static).update("(the run has no iterations yet)")
            return
        index = index % len(outline) if index < 0 else min(index, len(outline) - 1)
        if index == self.index and not force:
            return
        self.index = index
        strip = self.query_one(IterationStrip)
        if strip.cursor != index:
            strip.cursor = index
        cached = self.details.get(outline.numbers[index])
        if cached is not None:
            self._show(cached)
        else:
            self._title(Text(f"What the model saw — iteration {outline.numbers[index]} · "
                             "loading…", style="dim italic"))
            self._fetch(index)

    def _detail(self, outline: Outline, index: int) -> Iteration:
        """Iteration ``index``, from the cache or the store (on a worker thread)."""
        number = outline.numbers[index]
        found = self.details.get(number)
        if found is None:
            found = self.reader.iteration(number, outline.first_seq[index], outline.last_seq[index])
        return found

    def _fetch(self, index: int) -> None:
        def done(it: Iteration) -> None:
            self._keep(it)
            if self.index == index:
                self._show(it)

        outline = self.outline
        self.load("iteration", lambda: self._detail(outline, index), done)

    def _prefetch(self, index: int) -> None:
        """Read the neighbours of ``index`` ahead of the next key press."""
        around = [i for i in (index + 1, index - 1) if 0 <= i < len(self.outline)
                  and self.outline.numbers[i] not in self.details]
        if around:
            outline = self.outline
            self.load("prefetch", lambda: [self._detail(outline, i) for i in around],
                      self._keep_all)

    def _keep_all(self, its: list[Iteration]) -> None:
        for it in its:
            self._keep(it)

    def _keep(self, it: Iteration) -> None:
        self.details[it.number] = it
        self.details.move_to_end(it.number)
        while len(self.details) > _KEEP:
            self.details.popitem(last=False)

    def _show(self, it: Iteration) -> None:
        self.shown = it
        self._title(_seen_title(it, self.failure, self.costs.get(it.number)))
        if it.call is not None and it.number not in self.costs:
            self._read_cost(it)
        self._filled = {self.active_slot}
        self._fill(self.active_slot)
        self._inspect()
        if self.index >= 0 and self.details.get(self.outline.numbers[self.index]) is it:
            self._prefetch(self.index)

    def _title(self, text: Text) -> None:
        update_fitted(self.query_one("#seen-title", Static), text)

    def _fill(self, slot: str) -> None:
        """The blocks of ``slot`` in its list (the other tabs are filled when opened)."""
        blocks = self.query_one(f"#blocks-{slot}", OptionList)
        shown = () if self.shown is None else self.shown.slot(slot)
        blocks.set_options(_divided([Option(block_prompt(b)) for b in shown]))
        blocks.highlighted = 0 if shown else None

    def current_blocks(self) -> tuple[Block, ...]:
        return () if self.shown is None else self.shown.slot(self.active_slot)

    @property
    def active_slot(self) -> str:
        active = self.query_one(TabbedContent).active or "tab-system-prompt"
        return active.removeprefix("tab-")

    def _inspect(self) -> None:
        blocks = self.current_blocks()
        chosen = self.query_one(f"#blocks-{self.active_slot}", OptionList).highlighted
        block = blocks[chosen] if chosen is not None and chosen < len(blocks) else None
        update_fitted(self.query_one("#inspector", Static), inspector_text(block))

    def on_virtual_list_moved(self, event: VirtualList.Moved) -> None:
        if event.index != self.index and event.index == event.lines.cursor and len(self.outline):
            self.select(event.index)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._inspect()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        slot = self.active_slot
        if slot not in self._filled:
            self._filled.add(slot)
            self._fill(slot)
        self._inspect()

    def action_step(self, delta: int) -> None:
        self.select(max(0, self.index + delta))

    def action_jump(self, index: int) -> None:
        self.select(index)

    def action_tab(self, slot: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{slot}"

    def reload(self) -> None:
        super().reload()
        self._read_outline(live=True)
        if self.failure is None:
            self._read_failure()
