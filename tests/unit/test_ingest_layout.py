"""Where documents and sections sit in a request text (``recorder.ingest._layout``) and the
text cut into its parts and put back (``lens.explain._split``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.explain._split import Part, split_text
from recorder.ingest._layout import documents_in, sections_of

_WORD = st.text(alphabet="abcdefghij XYZ.,", min_size=1, max_size=16).map(str.strip).filter(
    bool)
_SEAM = st.sampled_from(["\n\n", "\n", " ", "\n \n", "\n\n\n"])


def _docs(text: str, known: tuple[tuple[str, str | None], ...] = ()) -> list[tuple[str, str]]:
    return [(str(s.doc_id), text[s.start:s.end]) for s in documents_in(text, known)]


def test_given_wrapped_documents_when_read_then_each_tag_is_a_document_with_its_id() -> None:
    text = 'Desk.\n<documents>\n<doc id="a">One.</doc>\n<doc id=b>Two.</doc>\n</documents>'
    assert _docs(text) == [("a", '<doc id="a">One.</doc>'), ("b", "<doc id=b>Two.</doc>")]


def test_given_cited_lines_when_read_then_each_citation_is_a_document() -> None:
    text = "Answer from these.\n[1] Refunds: 60 days.\n[2] Shipping is free.\n\nBe terse."
    assert _docs(text) == [("1", "[1] Refunds: 60 days."), ("2", "[2] Shipping is free.")]


def test_given_source_headings_when_read_then_each_section_is_a_document() -> None:
    text = "### Source: memo.md\nRefunds: 60 days.\n\n### Source: ship.md\nFree.\n## Rules\nX"
    assert _docs(text) == [("memo.md", "### Source: memo.md\nRefunds: 60 days."),
                           ("ship.md", "### Source: ship.md\nFree.")]


def test_given_numbered_document_labels_when_read_then_each_is_a_document() -> None:
    text = "Document 1: Refunds: 60 days.\nDocument 2: Shipping is free.\n\nQuestion: ok?"
    assert _docs(text) == [("1", "Document 1: Refunds: 60 days."),
                           ("2", "Document 2: Shipping is free.")]


def test_given_a_context_block_before_a_question_when_read_then_its_paragraphs_are_documents(
        ) -> None:
    text = "Context:\nRefunds: 60 days.\n\nShipping is free.\n\nQuestion: can I?"
    assert _docs(text) == [("context#1", "Refunds: 60 days."),
                           ("context#2", "Shipping is free.")]
    assert _docs("Context: you are a desk.\n\nBe terse.") == []  # no question: no documents


def test_given_a_retrieved_document_inside_a_tag_when_read_then_the_tag_takes_the_retriever_id(
        ) -> None:
    text = '<doc id="1">Refunds: 60 days.</doc>\n<doc id="2">Free.</doc>'
    assert _docs(text, (("Refunds: 60 days.", "memo"),)) == [
        ("memo", '<doc id="1">Refunds: 60 days.</doc>'), ("2", '<doc id="2">Free.</doc>')]


def test_given_instructions_without_documents_when_read_then_nothing_is_a_document() -> None:
    assert _docs("Documentation: be terse.\n\n# Rules\nNever guess.") == []


@given(st.lists(st.tuples(_WORD, _SEAM), max_size=6), _WORD)
def test_given_any_paragraphs_when_cut_into_sections_then_they_are_the_text_in_order(
        bits: list[tuple[str, str]], tail: str) -> None:
    text = "".join(w + s for w, s in bits) + tail
    spans = sections_of(text)
    assert all(text[s.start:s.end] == text[s.start:s.end].strip() for s in spans)
    assert "".join("".join(text[s.start:s.end] for s in spans).split()) == "".join(
        text.split())
    assert not any("\n\n" in text[s.start:s.end].replace(" ", "") for s in spans)


@given(st.lists(st.tuples(_WORD, _SEAM, st.booleans()), min_size=1, max_size=6),
       st.sets(st.integers(0, 5)))
def test_given_parts_with_any_seams_when_split_then_it_rebuilds_and_drops_exactly(
        bits: list[tuple[str, str, bool]], drop: set[int]) -> None:
    words = [f"{w} {i}" for i, (w, _, _) in enumerate(bits)]  # each part unique
    text = "".join(w + s for w, (_, s, _) in zip(words, bits, strict=True))
    landed = [Part(id=f"p{i}", text=w) for i, (w, (_, _, mark)) in
              enumerate(zip(words, bits, strict=True)) if mark]
    layout = split_text(text, landed)
    assert layout.text() == text and not layout.missing
    gone = {i for i in drop if i < len(layout.parts)}
    kept = layout.text(gone)
    for i, p in enumerate(layout.parts):
        assert (p.text in kept) == (i not in gone)
