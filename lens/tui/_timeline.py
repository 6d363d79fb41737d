"""The timeline: iteration strip · what the model saw (System · Messages · Tools) · inspector."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from lens.tui._base import RunScreen
from lens.tui._model import SLOT_TITLES, SLOTS, Block, Iteration, RunView

__all__ = ["TimelineScreen", "block_prompt", "strip_prompt"]

FLAVOR_COLOURS = {
    "base": "grey70", "skill": "magenta", "steering": "cyan", "fact": "yellow",
    "instructions": "green", "registry": "grey62", "memory": "blue", "rag": "blue",
    "user": "bright_white", "assistant": "bright_yellow", "tool-result": "bright_blue",
}


def strip_prompt(it: Iteration) -> Text:
    """Two lines per iteration: the cursor move, then tools, refusals and tokens."""
    text = Text()
    text.append(f"#{it.number:<3}", style="bold")
    move = it.move
    text.append(f"{move.from_skill or '∅'} → {move.to or '∅'} ({move.by})" if move is not None
                else "no cursor move")
    text.append("\n    ")
    text.append(", ".join(it.tools) or "no tools", style="bright_blue")
    if it.refusals:
        text.append(f" ⚠ {it.refusals} refused", style="bold red")
    text.append(f" · {it.tokens} tok", style="dim")
    return text


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


def _seen_title(it: Iteration) -> Text:
    text = Text("What the model saw", style="bold")
    call = it.call
    if call is None:
        return text.append(f" — iteration {it.number} made no model call", style="dim")
    brain = f", brain {call.brain_via}" if call.brain_via else ""
    skill = f" {call.brain_skill_id!r}" if call.brain_skill_id else ""
    return text.append(f" — iteration {it.number} · {call.step_id} · {call.provider}/"
                       f"{call.model}{brain}{skill} · llm.start seq {call.seq}")


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
    TimelineScreen #strip { width: 34; height: 1fr; }
    TimelineScreen #centre { width: 1fr; }
    TimelineScreen #seen-title { height: auto; padding: 0 1; }
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
    ]

    def body(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="strip")
            with Vertical(id="centre"):
                yield Static(id="seen-title")
                with TabbedContent(id="seen"):
                    for slot in SLOTS:
                        with TabPane(SLOT_TITLES[slot], id=f"tab-{slot}"):
                            yield OptionList(id=f"blocks-{slot}")
            with VerticalScroll(id="inspector-box"):
                yield Static(id="inspector")

    def on_mount(self) -> None:
        self.index, self._count = -1, 0
        self._fill_strip(self.state.view())
        self.select(0)
        self.query_one("#strip", OptionList).focus()

    @property
    def run_view(self) -> RunView:
        return self.state.view()

    def _fill_strip(self, view: RunView) -> None:
        self._count = len(view.iterations)
        strip = self.query_one("#strip", OptionList)
        strip.set_options(_divided([Option(strip_prompt(it), id=f"it-{it.number}")
                                    for it in view.iterations]))

    def select(self, index: int) -> None:
        """Show iteration ``index`` (0-based; negative counts from the end)."""
        its = self.run_view.iterations
        if not its:
            self.query_one("#seen-title", Static).update("(the run has no iterations yet)")
            return
        index = index % len(its) if index < 0 else min(index, len(its) - 1)
        self.index = index
        strip = self.query_one("#strip", OptionList)
        if strip.highlighted != index:
            strip.highlighted = index
        it = its[index]
        self.query_one("#seen-title", Static).update(_seen_title(it))
        for slot in SLOTS:
            blocks = self.query_one(f"#blocks-{slot}", OptionList)
            blocks.set_options(_divided([Option(block_prompt(b)) for b in it.slot(slot)]))
            blocks.highlighted = 0 if it.slot(slot) else None
        self._inspect()

    def current_blocks(self) -> tuple[Block, ...]:
        if self.index < 0:
            return ()
        return self.run_view.iterations[self.index].slot(self.active_slot)

    @property
    def active_slot(self) -> str:
        active = self.query_one(TabbedContent).active or "tab-system-prompt"
        return active.removeprefix("tab-")

    def _inspect(self) -> None:
        blocks = self.current_blocks()
        chosen = self.query_one(f"#blocks-{self.active_slot}", OptionList).highlighted
        block = blocks[chosen] if chosen is not None and chosen < len(blocks) else None
        self.query_one("#inspector", Static).update(inspector_text(block))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "strip":
            if event.option_index != self.index:
                self.select(event.option_index)
        else:
            self._inspect()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._inspect()

    def action_step(self, delta: int) -> None:
        self.select(max(0, self.index + delta))

    def action_jump(self, index: int) -> None:
        self.select(index)

    def action_tab(self, slot: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{slot}"

    def reload(self) -> None:
        super().reload()
        live = self.index < 0 or self.index == self._count - 1
        self._fill_strip(self.state.view())
        self.select(-1 if live else self.index)
