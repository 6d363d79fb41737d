"""The skills screen: the graph, the cursor's walk with its evidence, refusals, escalations.

Line-virtualized: the walk is an index of seqs (one query over the hot
columns); the events on screen are read and decoded by the page. Each walk
event is one line; the evidence of the one under the cursor (guards and
their conditions, conflicts, what was reachable) shows in full below.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from footprint.events import SkillGraphDeclared
from lens.tui._base import RunScreen
from lens.tui._lines import VirtualList
from lens.tui._reader import RunReader
from lens.tui._walk import WALK_HEAD, WALK_SQL, Line, entry_lines, graph_lines, totals_line

__all__ = ["SkillLines", "SkillsScreen", "Walk", "read_walk", "walk_text"]

_STYLES = {
    "head": "bold underline", "move": "bold magenta", "pass": "green", "fail": "red",
    "refusal": "bold red", "escalation": "bold yellow", "conflict": "yellow", "note": "",
}
_PAGE = 96


def walk_text(lines: list[Line]) -> Text:
    """The skill lines, coloured by kind."""
    text = Text()
    for kind, line in lines:
        text.append(line + "\n", style=_STYLES.get(kind, ""))
    return text


@dataclass(slots=True)
class Walk:
    """The walk's outline: lines before it, the seqs of its events, the line after it."""

    before: list[Line] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    after: Line = ("note", "")


def read_walk(reader: RunReader) -> Walk:
    """The graph (decoded: small) and the walk's seqs and totals: one scan of the hot
    columns finds both, then the graph's rows are read by seq."""
    table = reader.gate.arrow(
        "SELECT seq, type FROM _events_all WHERE run_id = ? AND "
        f"(type = 'skill.graph_declared' OR {WALK_SQL}) ORDER BY seq", [reader.run_id])
    seqs, types = table.column("seq").to_pylist(), table.column("type").to_pylist()
    graphs = [s for s, t in zip(seqs, types, strict=True) if t == "skill.graph_declared"]
    before: list[Line] = []
    for e in reader.events_at(graphs):
        if isinstance(e, SkillGraphDeclared):
            before += graph_lines(e)
    walk = [s for s, t in zip(seqs, types, strict=True) if t != "skill.graph_declared"]
    return Walk(before=[*before, WALK_HEAD], seqs=walk,
                after=totals_line(types.count("skill.rejected"), types.count("skill.escalated")))


class SkillLines(VirtualList):
    """The graph's lines, one line per walk event (read by the page), the totals."""

    DEFAULT_CSS = "SkillLines { height: 1fr; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.walk = Walk()
        self.entries: dict[int, list[Line]] = {}

    def use(self, walk: Walk) -> None:
        self.walk, self.entries = walk, {}
        self.set_count(len(walk.before) + len(walk.seqs) + 1, home=False)

    def seq_at(self, index: int) -> int | None:
        at = index - len(self.walk.before)
        return self.walk.seqs[at] if 0 <= at < len(self.walk.seqs) else None

    def lines_at(self, index: int) -> list[Line] | None:
        """All the lines of item ``index`` (``None`` while its event is not read)."""
        if index < len(self.walk.before):
            return [self.walk.before[index]]
        seq = self.seq_at(index)
        return [self.walk.after] if seq is None else self.entries.get(seq)

    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        lines = self.lines_at(index)
        if lines is None:
            return None
        kind, line = lines[0] if lines else ("note", "")
        more = f"  (+{len(lines) - 1} lines of evidence)" if len(lines) > 1 else ""
        return [Segment(line, Style.parse(_STYLES.get(kind) or "none")),
                Segment(more, Style(dim=True))]


class SkillsScreen(RunScreen):
    """The walk on top; the evidence of the event under the cursor below."""

    NAME = "skills"
    DEFAULT_CSS = """
    SkillsScreen SkillLines { height: 1fr; }
    SkillsScreen #evidence-box { height: 10; border-top: solid $panel; }
    """

    def body(self) -> ComposeResult:
        yield SkillLines(id="walk")
        with VerticalScroll(id="evidence-box"):
            yield Static(id="evidence")

    def on_mount(self) -> None:
        self.reader = self.state.reader()
        lines = self.query_one(SkillLines)
        lines.on_missing = self._want
        lines.loading = True
        lines.focus()
        self._draw()

    def _draw(self) -> None:
        reader = self.reader
        self.load("walk", lambda: read_walk(reader), self._walk_read)

    def _walk_read(self, walk: Walk) -> None:
        lines = self.query_one(SkillLines)
        lines.loading = False
        if self.focused is None:
            lines.focus()
        lines.use(walk)

    def _want(self, first: int, last: int) -> None:
        lines = self.query_one(SkillLines)
        seqs = [s for i in range(first, max(last, first + _PAGE) + 1)
                if (s := lines.seq_at(i)) is not None and s not in lines.entries]
        if not seqs:
            return
        reader = self.reader

        def read() -> dict[int, list[Line]]:
            return {e.seq: entry_lines(e) for e in reader.events_at(seqs)}

        def done(found: dict[int, list[Line]]) -> None:
            lines.entries.update(found)
            for s in seqs:
                lines.entries.setdefault(s, [("note", f"seq {s} (no longer in the store)")])
            lines.refresh()
            self._evidence(lines.cursor)

        self.load("entries", read, done)

    def on_virtual_list_moved(self, event: VirtualList.Moved) -> None:
        self._evidence(event.index)

    def _evidence(self, index: int) -> None:
        found = self.query_one(SkillLines).lines_at(index)
        box = self.query_one("#evidence", Static)
        box.update(walk_text(found) if found else Text("(reading…)" if found is None else "",
                                                       style="dim"))

    def reload(self) -> None:
        super().reload()
        self._draw()
