"""The why report as the lens shows it below the suspects, with the sentence named inside
its piece: under the suspect whose piece it is, the lines around the named sentence(s),
each named span highlighted in the root's colour (the words are ``footprint why``'s own,
:func:`lens.explain._report.render_why` and ``sentence_line``)."""

from __future__ import annotations

from rich.text import Text

from lens.explain._report import SentenceClaim, WhyReport, render_why, sentence_line
from lens.tui._verdict import CLASSES

__all__ = ["SPAN_STYLE", "piece_window", "report_lines"]

SPAN_STYLE = f"{CLASSES['root'][1]} reverse"
"""A named sentence inside its piece: the root's colour, reversed."""

AROUND = 2
"""Lines shown before and after the named ones."""


def piece_window(c: SentenceClaim, indent: str = "      ") -> list[Text]:
    """The piece's lines around its named spans (``│`` before each), the spans
    highlighted; ``…`` where lines are left out."""
    lines = c.text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    hit = [i for i in range(len(lines))
           if any(s.start < starts[i + 1] and s.end > starts[i] for s in c.spans)]
    lo, hi = max(0, min(hit) - AROUND), min(len(lines), max(hit) + AROUND + 1)
    out: list[Text] = []
    if lo > 0:
        out.append(Text(f"{indent}│ … {lo} line(s) above", style="dim"))
    for i in range(lo, hi):
        text = Text(f"{indent}│ ", style="dim")
        body = Text(lines[i].rstrip("\r\n"))
        for s in c.spans:
            a, b = max(s.start, starts[i]) - starts[i], min(s.end, starts[i + 1]) - starts[i]
            if a < b:
                body.stylize(SPAN_STYLE, a, min(b, len(body)))
        out.append(text + body)
    if hi < len(lines):
        out.append(Text(f"{indent}│ … {len(lines) - hi} line(s) below", style="dim"))
    return out


def _block(c: SentenceClaim) -> list[Text]:
    style = CLASSES["root"][1] if c.kind != "unknown" else CLASSES["inconclusive"][1]
    head = [Text(f"      {sentence_line(c)}", style=style)]
    return head + (piece_window(c) if c.spans and c.text else [])


def report_lines(report: WhyReport) -> list[Text]:
    """``render_why``'s lines (every suspect), each sentence claim's block after the
    lines of the suspect whose piece it names."""
    plain = render_why(report, top=len(report.suspects))
    after: dict[int, list[Text]] = {}
    for c in report.sentences:
        if c.kind == "whole":  # the sentence is the piece: nothing inside it to show
            continue
        at = _end_of(plain, c, report)
        if at is not None:
            after.setdefault(at, []).extend(_block(c))
    out: list[Text] = []
    for i, line in enumerate(plain):
        out.append(Text(line))
        out += after.get(i, [])
    return out


def _end_of(lines: list[str], c: SentenceClaim, report: WhyReport) -> int | None:
    """The index of the last line of the block of the suspect named ``c.piece``."""
    s = next((s for s in report.suspects if s.label == c.piece and s.kind != "set"), None)
    if s is None:
        return None
    mark = f"  {s.rank:>2}. [{s.kind}]"
    start = next((i for i, line in enumerate(lines) if line.startswith(mark)), None)
    if start is None:
        return None
    end = start
    while end + 1 < len(lines) and lines[end + 1].startswith("      "):
        end += 1
    return end
