"""A line-virtualized list: only the lines on screen are ever formatted, and rows arrive on demand.

``DataTable`` and ``OptionList`` measure every row before their first paint
(seconds for 100k rows); :class:`VirtualList` is a ``ScrollView`` whose
``render_line`` formats the one line asked for. A row whose data is not in
memory yet paints as a dim placeholder, and the list calls ``on_missing``
once per frame with the on-screen range of such rows, so its owner can fetch
that page on a worker and ``refresh()`` the list when it lands.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["CURSOR", "VirtualList"]

CURSOR = Style(bgcolor="grey27", bold=True)
_PENDING = Style(dim=True, italic=True)


class VirtualList(ScrollView, can_focus=True):
    """``count`` items of ``item_height`` lines each, a cursor, nothing measured up front."""

    DEFAULT_CSS = "VirtualList { height: 1fr; }"
    BINDINGS = [  # noqa: RUF012 (Textual's declared class attribute)
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "Top", show=False),
        Binding("end", "edge(1)", "Bottom", show=False),
    ]
    cursor: reactive[int] = reactive(0)
    item_height = 1
    width = 160
    """The lines' width; 0: as wide as the list (no horizontal scrolling)."""

    class Moved(Message):
        """The cursor landed on another item."""

        def __init__(self, lines: VirtualList, index: int) -> None:
            super().__init__()
            self.lines, self.index = lines, index

        @property
        def control(self) -> VirtualList:
            return self.lines

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.count = 0
        self.lines_rendered = 0
        self.on_missing: Callable[[int, int], None] | None = None
        self._missing: tuple[int, int] | None = None

    # ── what subclasses provide ──────────────────────────────────────────────
    def item_segments(self, index: int, part: int) -> list[Segment] | None:
        """Line ``part`` of item ``index``, or ``None`` while its data is not loaded."""
        raise NotImplementedError

    # ── size and repaint ─────────────────────────────────────────────────────
    def set_count(self, count: int, *, home: bool = True) -> None:
        """The items changed (loaded, filtered, grown): resize and repaint."""
        self.count = count
        self._size_lines()
        if home:
            self.cursor = 0
            self.scroll_to(0, 0, animate=False)
        elif self.cursor >= count:
            self.cursor = max(0, count - 1)
        self.refresh()
        self.post_message(self.Moved(self, self.cursor))

    def _size_lines(self) -> None:
        width = self.width or self.scrollable_content_region.width
        self.virtual_size = Size(width, self.count * self.item_height)

    def on_resize(self) -> None:
        self._size_lines()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index, part = divmod(scroll_y + y, self.item_height)
        width = self.scrollable_content_region.width
        if index >= self.count:
            return Strip.blank(width, self.rich_style)
        self.lines_rendered += 1
        segments = self.item_segments(index, part)
        if segments is None:
            self._want(index)
            segments = [Segment("  …" if part == 0 else "", _PENDING)]
        strip = Strip(segments)
        chosen = index == self.cursor
        if chosen:
            strip = strip.apply_style(CURSOR)
        return strip.crop_extend(scroll_x, scroll_x + width, CURSOR if chosen else self.rich_style)

    def _want(self, index: int) -> None:
        if self._missing is None:
            self._missing = (index, index)
            self.call_after_refresh(self._ask)
        else:
            lo, hi = self._missing
            self._missing = (min(lo, index), max(hi, index))

    def _ask(self) -> None:
        missing, self._missing = self._missing, None
        if missing is not None and self.on_missing is not None:
            self.on_missing(*missing)

    def visible_range(self) -> tuple[int, int]:
        """The first and last item index on screen (clamped to the items)."""
        top = self.scroll_offset.y // self.item_height
        rows = max(1, self.scrollable_content_region.height // self.item_height + 1)
        return top, max(top, min(self.count - 1, top + rows))

    # ── the cursor ───────────────────────────────────────────────────────────
    def watch_cursor(self, old: int, new: int) -> None:
        top = self.scroll_offset.y
        height = self.scrollable_content_region.height
        first, last = new * self.item_height, (new + 1) * self.item_height - 1
        if first < top:
            self.scroll_to(y=first, animate=False)
        elif height and last >= top + height:
            self.scroll_to(y=last - height + 1, animate=False)
        self.refresh()

    def go(self, index: int) -> None:
        """Move the cursor to ``index`` (clamped) and say so."""
        if self.count <= 0:
            return
        self.cursor = max(0, min(self.count - 1, index))
        self.post_message(self.Moved(self, self.cursor))

    def action_move(self, delta: int) -> None:
        self.go(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        page = max(1, self.scrollable_content_region.height // self.item_height - 1)
        self.go(self.cursor + direction * page)

    def action_edge(self, end: int) -> None:
        self.go(self.count - 1 if end else 0)
