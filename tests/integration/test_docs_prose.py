"""The documentation reads in sentences a reader can hold: none of its prose (outside code
blocks, tables, headings and generated figures) runs past 60 words (issue 35)."""

from __future__ import annotations

import re

from docs_support import ROOT, doc_pages

LIMIT = 60
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.S | re.M)
_GENERATED = re.compile(r"<!-- ([\w-]+):start -->.*?<!-- \1:end -->", re.S)
_SKIPPED_LINE = re.compile(r"^\s*(\||#|<!--)")
_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")


def _paragraphs(markdown: str) -> list[str]:
    """The prose of a page: each paragraph and each list item joined into one line."""
    text = _GENERATED.sub("\n\n", _FENCE.sub("\n\n", markdown))
    paragraphs: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or _SKIPPED_LINE.match(line) or _ITEM.match(line):
            paragraphs.append([])
        if line.strip() and not _SKIPPED_LINE.match(line):
            paragraphs[-1].append(_ITEM.sub("", line).strip())
    return [" ".join(lines) for lines in paragraphs if lines]


def _sentences(paragraph: str) -> list[str]:
    """A paragraph cut after each `.`, `!` or `?` that ends a word; code counts as one word."""
    plain = re.sub(r"\]\([^)]*\)", "]", re.sub(r"`[^`]*`", "CODE", paragraph))
    return re.split(r"(?<=[.!?])\s+", plain)


def _long_sentences(markdown: str) -> list[str]:
    return [sentence for paragraph in _paragraphs(markdown) for sentence in _sentences(paragraph)
            if len(re.findall(r"\w[\w'’.-]*", sentence)) > LIMIT]


def test_given_a_sentence_of_61_words_when_read_then_it_is_found_and_code_is_not() -> None:
    long = " ".join(["word"] * 61) + "."
    page = f"Short one. {long}\n\n```python\n{long}\n```\n\n| {long} |\n"
    assert _long_sentences(page) == [long]
    assert _long_sentences(page.replace("word word.", "word. Word.")) == []


def test_given_every_documentation_page_when_read_then_no_sentence_passes_60_words() -> None:
    found = {str(page.relative_to(ROOT)): _long_sentences(page.read_text(encoding="utf-8"))
             for page in doc_pages()}
    assert {page: sentences for page, sentences in found.items() if sentences} == {}, (
        f"sentences over {LIMIT} words: split them (one fact each where a list reads better)")
