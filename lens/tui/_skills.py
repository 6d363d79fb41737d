"""The skills screen: the graph, the cursor's walk with its evidence, refusals, escalations."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from lens.tui._base import RunScreen
from lens.tui._walk import Line, skill_lines

__all__ = ["SkillsScreen", "walk_text"]

_STYLES = {
    "head": "bold underline", "move": "bold magenta", "pass": "green", "fail": "red",
    "refusal": "bold red", "escalation": "bold yellow", "conflict": "yellow", "note": "",
}


def walk_text(lines: list[Line]) -> Text:
    """The skill lines, coloured by kind."""
    text = Text()
    for kind, line in lines:
        text.append(line + "\n", style=_STYLES.get(kind, ""))
    return text


class SkillsScreen(RunScreen):
    """Read-only and small: one scrollable text."""

    NAME = "skills"
    DEFAULT_CSS = "SkillsScreen #walk-box { height: 1fr; }"

    def body(self) -> ComposeResult:
        with VerticalScroll(id="walk-box"):
            yield Static(id="walk")

    def on_mount(self) -> None:
        self._draw()
        self.query_one("#walk-box").focus()

    def _draw(self) -> None:
        lines = skill_lines(self.state.view().events)
        self.query_one("#walk", Static).update(walk_text(lines))

    def reload(self) -> None:
        super().reload()
        self._draw()
