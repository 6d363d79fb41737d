"""The mapper's shortcuts give what the long way gives: a text is searched for a layout only
when it holds that layout's marker (``recorder.ingest._layout``), and a system text's pieces
are worked out once and shared between calls (``recorder.ingest._pieces``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recorder.ingest._layout import (
    _cited,
    _context_block,
    _documents,
    _first_layout,
    _headed,
    _labelled,
    _tags,
    documents_in,
)
from recorder.ingest._pieces import _system, _system_pieces
from recorder.ingest._request import ChatRequest

_FRAGMENTS = st.sampled_from([
    "<doc id=1>", "</doc>", "<source name='a'>", "</source>", "### Source: memo.md",
    "## Rules", "[1] ", "[2]: ", "Document 2:", "**doc 3**)", "passage #4]", "Context:",
    "Question:", "query:", "\n", "\n\n", " ", "\t", "Refunds: 60 days.", "free", "#", "[",
    ":", ")", "]", "<", "x"])
_TEXTS = st.lists(_FRAGMENTS, max_size=24).map("".join)


def _every_layout(text: str) -> list[object]:
    """``_first_layout`` without the marker check: every finder tried in order."""
    for finder in (_tags, _headed, _cited, _labelled, _context_block):
        found = finder(text)
        if found:
            return list(found)
    return []


@given(_TEXTS)
def test_given_any_text_when_documents_are_sought_then_the_marker_check_changes_nothing(
        text: str) -> None:
    assert _first_layout(text) == _every_layout(text)
    assert documents_in(text) == list(_documents.__wrapped__(text, ()))


@given(st.lists(_TEXTS, max_size=3))
def test_given_a_system_text_when_its_pieces_are_made_twice_then_both_are_the_long_way(
        system: list[str]) -> None:
    req = ChatRequest(dialect="otel-genai", system=tuple(system))
    want_placed: set[str] = set()
    want = _system_pieces(req.system, (), want_placed)
    for _ in range(2):  # the second time from the cache
        placed: set[str] = set()
        assert _system(req, (), placed) == want
        assert placed == want_placed
