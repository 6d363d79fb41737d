"""Where the documents and the sections of one request text sit: the layouts agents use to
put what a retriever found into a system or user message (``<doc id=…>`` wrappers, ``[1]``
citations, ``### Source:`` headings, ``Document 2:`` labels, a ``Context: … Question: …``
block) and the paragraphs of an instruction, as exact character spans, so that each can be
a piece of its own and removed without touching its neighbours."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Span", "documents_in", "sections_of"]


@dataclass(frozen=True, slots=True)
class Span:
    """``text[start:end]`` is one document (``doc_id`` as the layout names it, or ``None``)
    or one section of an instruction."""

    start: int
    end: int
    doc_id: str | None = None


_TAGS = "document|doc|source|context|passage|chunk"
_OPEN = re.compile(rf"<({_TAGS})\b([^<>]{{0,400}})>", re.IGNORECASE)
_CLOSE = re.compile(rf"</({_TAGS})\s*>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(?:id|doc_id|name|source|title|index)\s*=\s*["']?([^"'\s>]+)""",
                   re.IGNORECASE)
_CITED = re.compile(r"^[ \t]*\[(\d{1,4})\]:?[ \t]+\S", re.MULTILINE)
_LABEL = re.compile(r"^[ \t]*(?:\*\*)?(?:document|doc|source|passage|excerpt)(?:[ \t]+#?|#)"
                    r"(\d{1,4}|[\w.\-/]+)(?:\*\*)?[ \t]*[:\]\)](?:\*\*)?",
                    re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?:(?:source|document|doc|passage|reference)"
                      r"\b[ \t]*(?:#|:)?[ \t]*(.*?)|.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_DOC_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?:source|document|doc|passage|reference)\b",
                          re.IGNORECASE)
_CONTEXT = re.compile(r"^[ \t]*(?:context|documents|sources|retrieved(?: documents)?)[ \t]*:"
                      r"[ \t]*\n?", re.IGNORECASE | re.MULTILINE)
_QUESTION = re.compile(r"^[ \t]*(?:question|query|user question)[ \t]*:", re.IGNORECASE |
                       re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\n")


def _trimmed(text: str, start: int, end: int, doc_id: str | None = None) -> Span | None:
    """The span without the whitespace at its ends (``None`` when nothing is left)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end, doc_id) if end > start else None


def _tags(text: str) -> list[Span]:
    """Each ``<doc …>…</doc>`` (of the tags in ``_TAGS``): an opening tag to the next
    closing tag of its name (closing tags indexed once: linear in the text, whatever it
    holds)."""
    closes: dict[str, tuple[list[int], list[int]]] = {}
    for m in _CLOSE.finditer(text):
        starts, ends = closes.setdefault(m.group(1).lower(), ([], []))
        starts.append(m.start())
        ends.append(m.end())
    out: list[Span] = []
    for m in _OPEN.finditer(text):
        starts, ends = closes.get(m.group(1).lower(), ([], []))
        at = bisect.bisect_left(starts, m.end())
        if at >= len(starts) or (out and m.start() < out[-1].end):
            continue
        found = _ATTR.search(m.group(2))
        out.append(Span(m.start(), ends[at], found.group(1) if found else None))
    return out


def _blocks(text: str, starts: Sequence[re.Match[str]], ids: Sequence[str | None],
            stop_at_blank: bool) -> list[Span]:
    """Each marked block: from its marker to the next marker (or a blank line, or the end)."""
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        if stop_at_blank and (blank := _BLANK.search(text, m.end(), end)) is not None:
            end = blank.start()
        question = _QUESTION.search(text, m.end(), end)
        if question is not None:
            end = question.start()
        if (span := _trimmed(text, m.start(), end, ids[i])) is not None:
            out.append(span)
    return out


def _cited(text: str) -> list[Span]:
    found = list(_CITED.finditer(text))
    return _blocks(text, found, [m.group(1) for m in found], stop_at_blank=True)


def _labelled(text: str) -> list[Span]:
    found = list(_LABEL.finditer(text))
    return _blocks(text, found, [m.group(1) for m in found], stop_at_blank=True)


def _headed(text: str) -> list[Span]:
    """Each ``### Source: …`` section, to the next heading of any kind."""
    heads = list(_HEADING.finditer(text))
    if not any(_DOC_HEADING.match(m.group(0)) for m in heads):
        return []
    out = []
    for i, m in enumerate(heads):
        if not _DOC_HEADING.match(m.group(0)):
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        question = _QUESTION.search(text, m.end(), end)
        label = (m.group(1) or "").strip().strip("*`") or None
        span = _trimmed(text, m.start(), question.start() if question else end, label)
        if span is not None:
            out.append(span)
    return out


def _context_block(text: str) -> list[Span]:
    """The paragraphs of a ``Context:`` block ended by a ``Question:`` line (the commonest
    RAG prompt): each paragraph one document, numbered in order."""
    head = _CONTEXT.search(text)
    if head is None:
        return []
    question = _QUESTION.search(text, head.end())
    if question is None:  # a "Context:" line alone is as likely an instruction's heading
        return []
    end = question.start()
    out, pos, n = [], head.end(), 0
    for gap in [*_BLANK.finditer(text, pos, end), None]:
        stop = gap.start() if gap is not None else end
        if (span := _trimmed(text, pos, stop)) is not None:
            n += 1
            out.append(Span(span.start, span.end, f"context#{n}"))
        if gap is not None:
            pos = gap.end()
    return out


_MARKS = ((_tags, "<"), (_headed, "#"), (_cited, "["), (_labelled, ":])"),
          (_context_block, ":"))
"""Each layout's finder, and the characters one of which its marker cannot do without
(a text holding none of them is not searched: most messages mark no document)."""
_ANY_MARK = re.compile("[" + re.escape("".join(dict.fromkeys("".join(
    marks for _, marks in _MARKS)))) + "]")


def _first_layout(text: str) -> list[Span]:
    for finder, marks in _MARKS:
        if not any(mark in text for mark in marks):
            continue
        found = finder(text)
        if found:
            return found
    return []


def documents_in(text: str, known: Sequence[tuple[str, str | None]] = ()) -> list[Span]:
    """The documents of ``text``, in order, without overlaps: each ``known`` document (its
    text and id, from a retriever) where it sits — widened to the layout's block around it,
    under the retriever's id — and every other document the layout marks."""
    if not known and _ANY_MARK.search(text) is None:
        return []  # no retrieved document, and no layout's marker (most messages)
    return list(_documents(text, tuple(known)))


@functools.lru_cache(maxsize=1024)
def _documents(text: str, known: tuple[tuple[str, str | None], ...]) -> tuple[Span, ...]:
    """:func:`documents_in`, worked out once per text: a trace's later calls send the
    system text and the earlier messages again."""
    marked = _first_layout(text)
    out: list[Span] = []
    for content, doc_id in known:
        at = text.find(content) if content else -1
        if at < 0:
            continue
        block = next((s for s in marked if s.start <= at and at + len(content) <= s.end),
                     Span(at, at + len(content)))
        out.append(Span(block.start, block.end, doc_id or block.doc_id))
    out.sort(key=lambda s: s.start)
    starts = [s.start for s in out]
    reach = list(itertools.accumulate((s.end for s in out), max))
    out += [span for span in marked if not _overlaps(span, starts, reach)]
    out.sort(key=lambda s: s.start)
    kept: list[Span] = []
    for span in out:
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return tuple(kept)


def _overlaps(span: Span, starts: Sequence[int], reach: Sequence[int]) -> bool:
    """Whether ``span`` overlaps a placed span: ``starts`` theirs, sorted, and ``reach[i]``
    the furthest end of the first ``i + 1``."""
    at = bisect.bisect_left(starts, span.end)  # those starting at or after its end cannot
    return at > 0 and reach[at - 1] > span.start


def sections_of(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """The paragraphs of ``text[start:end]`` (split on blank lines), trimmed."""
    stop = len(text) if end is None else end
    out, pos = [], start
    for gap in [*_BLANK.finditer(text, start, stop), None]:
        cut = gap.start() if gap is not None else stop
        if (span := _trimmed(text, pos, cut)) is not None:
            out.append(span)
        if gap is not None:
            pos = gap.end()
    return out
