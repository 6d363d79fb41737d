"""Entry matchers (spec §2.2): keyword boundaries, regex search, AND, witnesses, captions."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.graph._matchers import (
    All,
    Intent,
    Keywords,
    Matcher,
    MatchHit,
    Regex,
    compile_matcher,
    make_witness,
)

WHERE = "entry 'billing'"


def _search(m: Matcher, text: str) -> MatchHit | None:
    return compile_matcher(m, where=WHERE).search(text)


# ── keywords ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("word", "text", "matches"),
    [
        ("refund", "I want a refund now", True),
        ("refund", "two refunds please", False),
        ("charge", "a charge I do not know", True),
        ("charge", "my charger broke", False),
        ("visa card", "my Visa card was declined", True),
        ("visa card", "a visa for my card", False),
        ("v2?", "is v2? out yet", True),
        ("v2?", "is v2 out yet", False),
        ("REFUND", "refund", True),
    ],
)
def test_given_a_keyword_when_searching_then_word_edges_follow_spec_examples(
    word: str, text: str, matches: bool
) -> None:
    assert (_search(Keywords((word,)), text) is not None) is matches


def test_given_a_phrase_keyword_when_the_message_spaces_it_out_then_it_matches() -> None:
    hit = _search(Keywords(("visa card",)), "my VISA \n  card")
    assert hit == MatchHit(witness="VISA card", keyword="visa card")


def test_given_several_keywords_when_two_occur_then_the_first_declared_is_the_evidence() -> None:
    hit = _search(Keywords(("refund", "charge")), "a charge and then a refund")
    assert hit == MatchHit(witness="refund", keyword="refund")


def test_given_a_keyword_ending_in_a_non_ascii_letter_when_followed_by_more_then_no_edge_is_needed(
) -> None:
    assert _search(Keywords(("café",)), "two cafés") is not None


def test_given_ascii_boundaries_when_a_keyword_is_followed_by_a_non_ascii_letter_then_it_matches(
) -> None:
    # re.ASCII: 'ï' is not a word character, so the edge after "na" holds.
    assert _search(Keywords(("na",)), "naïve") is not None
    assert _search(Keywords(("na",)), "nab") is None


def test_given_keywords_as_a_list_when_declared_then_they_are_stored_as_a_tuple() -> None:
    assert Keywords(["a", "b"]).words == ("a", "b")  # type: ignore[arg-type]


# ── regex ──────────────────────────────────────────────────────────────────


def test_given_a_regex_when_the_pattern_occurs_mid_message_then_search_finds_it() -> None:
    hit = _search(Regex(r"order #\d+"), "where is order #1234 today")
    assert hit == MatchHit(witness="order #1234", keyword=None)


def test_given_a_regex_without_flags_when_case_differs_then_it_does_not_match() -> None:
    assert _search(Regex("refund"), "REFUND") is None


def test_given_a_compiled_pattern_when_it_has_ignorecase_then_its_flags_are_honoured() -> None:
    assert _search(Regex(re.compile("refund", re.I)), "REFUND") is not None


# ── all / intent ───────────────────────────────────────────────────────────


def test_given_all_when_every_member_matches_then_the_first_members_witness_wins() -> None:
    m = All((Keywords(("card",)), Regex(r"declin\w+")))
    assert _search(m, "my card was declined") == MatchHit(witness="card", keyword="card")


def test_given_all_when_one_member_misses_then_nothing_matches() -> None:
    assert _search(All((Keywords(("card",)), Regex("declin"))), "my card works") is None


def test_given_nested_all_when_compiled_then_it_is_flattened_into_one_and() -> None:
    m = All((All((Regex("a+"), Regex("b"))), Keywords(("zed",))))
    compiled = compile_matcher(m, where=WHERE)
    assert compiled.caption() == "/a+/ AND /b/ AND zed"
    assert compiled.search("aa b zed") == MatchHit(witness="aa", keyword=None)
    assert compiled.search("aa b zeds") is None


def test_given_an_intent_when_searching_any_text_then_it_never_matches_by_itself() -> None:
    compiled = compile_matcher(Intent("refund request", ("money back",)), where=WHERE)
    assert compiled.search("refund request money back") is None
    assert compiled.matcher == Intent("refund request", ("money back",))


# ── refusals ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("make", "quoted", "at_compile"),
    [
        (lambda: Regex("(unclosed"), "'(unclosed'", False),
        (lambda: Regex(""), "''", False),
        (lambda: Regex(re.compile(b"bytes")), "b'bytes'", True),  # type: ignore[arg-type]
        (lambda: Regex(42), "42", False),  # type: ignore[arg-type]
        (lambda: Keywords(()), "()", True),
        (lambda: Keywords("refund"), "'refund'", False),  # type: ignore[arg-type]
        (lambda: Keywords(("ok", "  ")), "'  '", False),
        (lambda: Keywords(("ok", 7)), "7", False),  # type: ignore[arg-type]
        (lambda: All(()), "()", True),
        (lambda: All((Regex("a"), Intent("refund"))), "'refund'",  # type: ignore[arg-type]
         False),
        (lambda: All((Regex("a"), "b")), "'b'", False),  # type: ignore[arg-type]
        (lambda: Intent("  "), "'  '", False),
        (lambda: Intent("refund", ("money back", "Money  back")), "'Money  back'", True),
        (lambda: Intent("refund", ("",)), "''", True),
        (lambda: "refund", "'refund'", True),
    ],
)
def test_given_a_malformed_matcher_when_made_or_compiled_then_config_error_quotes_the_value(
    make: Callable[[], Matcher], quoted: str, at_compile: bool
) -> None:
    with pytest.raises(ConfigError) as caught:
        compile_matcher(make(), where=WHERE)
    assert quoted in str(caught.value)
    assert (WHERE in str(caught.value)) is at_compile  # else refused by the constructor


def test_given_a_single_string_as_keywords_when_made_then_the_error_says_to_wrap_it() -> None:
    with pytest.raises(ConfigError, match="wrap a single keyword in a tuple"):
        Keywords("refund")  # type: ignore[arg-type]


# ── witness ────────────────────────────────────────────────────────────────


def test_given_matched_text_with_runs_of_whitespace_when_witnessed_then_collapsed_and_trimmed(
) -> None:
    hit = _search(Regex(r"\s*order\s+status\s*"), "my  order \t\n status  please")
    assert hit is not None
    assert hit.witness == "order status"


def test_given_a_match_longer_than_80_chars_when_witnessed_then_79_chars_and_an_ellipsis() -> None:
    hit = _search(Regex("x+"), "x" * 200)
    assert hit is not None
    assert hit.witness == "x" * 79 + "…"
    assert len(hit.witness) == 80


def test_given_exactly_80_chars_when_witnessed_then_nothing_is_cut() -> None:
    assert make_witness("y" * 80) == "y" * 80


# ── captions ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("matcher", "caption"),
    [
        (Regex(r"^refund\b"), r"/^refund\b/"),
        (Regex(re.compile("refund", re.I | re.M)), "/refund/im"),
        (Keywords(("a", "b")), "a, b"),
        (Keywords(("a", "b", "c")), "a, b, c"),
        (Keywords(("a", "b", "c", "d", "e")), "a, b, c, +2 more"),
        (All((Regex("x"), Keywords(("y",)))), "/x/ AND y"),
    ],
)
def test_given_a_matcher_when_captioned_then_it_follows_the_mermaid_rules(
    matcher: Matcher, caption: str
) -> None:
    assert compile_matcher(matcher, where=WHERE).caption() == caption


# ── properties ─────────────────────────────────────────────────────────────

_MATCHERS = [
    Regex(r"(?s).+"),
    Regex(r"\d+"),
    Keywords(("refund", "visa card", "v2?", "ça")),
    All((Keywords(("card",)), Regex("x"))),
    Intent("anything"),
]


@given(text=st.text(max_size=400), index=st.integers(0, len(_MATCHERS) - 1))
def test_given_arbitrary_text_when_any_matcher_searches_then_it_never_raises_and_witness_is_tidy(
    text: str, index: int
) -> None:
    hit = compile_matcher(_MATCHERS[index], where=WHERE).search(text)
    if hit is not None and hit.witness is None:  # nothing but whitespace matched
        return
    if hit is not None:
        assert hit.witness and len(hit.witness) <= 80
        assert hit.witness == hit.witness.strip()
        assert "  " not in hit.witness


_WORD = st.from_regex(r"[a-z][a-z0-9]{1,10}", fullmatch=True)


@given(word=_WORD, before=st.sampled_from(["", "x ", "(", "go: "]),
       after=st.sampled_from(["", " y", "!", "."]))
def test_given_a_keyword_when_it_stands_alone_then_it_matches_and_reports_itself(
    word: str, before: str, after: str
) -> None:
    hit = _search(Keywords((word,)), before + word.upper() + after)
    assert hit == MatchHit(witness=word.upper(), keyword=word)


@given(word=_WORD, suffix=st.from_regex(r"[a-z0-9_]+", fullmatch=True))
def test_given_a_keyword_when_only_a_longer_word_contains_it_then_it_does_not_match(
    word: str, suffix: str
) -> None:
    assert _search(Keywords((word,)), f"- {word}{suffix} -") is None
