"""Tier-2 routing (spec §2.8, §7 case 15): decide_tier2 and the keyword scorer."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.graph._routing import (
    KeywordScorer,
    RoutingPolicy,
    Scorer,
    decide_tier2,
    keyword_tokens,
    set_cosine,
)

POLICY = RoutingPolicy()


# ── case 15 ────────────────────────────────────────────────────────────────


def test_given_a_clear_winner_when_cold_then_tier2_moves_to_it_decisively() -> None:
    verdict = decide_tier2([("a", 0.9), ("b", 0.1)], None, POLICY)
    assert (verdict.kind, verdict.to, verdict.decisive, verdict.offered) == ("move", "a", True, ())
    assert verdict.runner_up == ("b", pytest.approx(math.tanh(0.4)))


def test_given_a_three_way_near_tie_when_cold_then_tier2_offers_a_menu_of_all_three() -> None:
    verdict = decide_tier2([("a", 0.52), ("b", 0.5), ("c", 0.49)], None, POLICY)
    assert (verdict.kind, verdict.to, verdict.offered, verdict.decisive) == (
        "menu", None, ("a", "b", "c"), False,
    )


def test_given_a_near_tie_when_mid_run_then_tier2_stays_with_the_incumbent() -> None:
    verdict = decide_tier2([("a", 0.52), ("b", 0.5), ("inc", 0.0)], "inc", POLICY)
    assert (verdict.kind, verdict.to, verdict.offered) == ("stay", "inc", ())


def test_given_a_decisive_top_that_is_the_incumbent_when_mid_run_then_it_stays() -> None:
    verdict = decide_tier2([("a", 0.1), ("inc", 0.9)], "inc", POLICY)
    assert (verdict.kind, verdict.to, verdict.decisive) == ("stay", "inc", True)


def test_given_a_decisive_top_other_than_the_incumbent_when_mid_run_then_it_moves() -> None:
    verdict = decide_tier2([("a", 0.9), ("inc", 0.0)], "inc", POLICY)
    assert (verdict.kind, verdict.to) == ("move", "a")


def test_given_all_scores_at_or_below_the_floor_when_decided_then_unmatched() -> None:
    verdict = decide_tier2([("a", 0.0), ("b", -0.3), ("c", 0.0)], None, POLICY, floor=0.0)
    assert (verdict.kind, verdict.to, verdict.offered, verdict.runner_up) == (
        "unmatched", None, (), None,
    )


def test_given_all_zero_scores_and_no_floor_when_cold_then_a_menu_of_the_top_three() -> None:
    verdict = decide_tier2([("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0)], None, POLICY)
    assert (verdict.kind, verdict.offered) == ("menu", ("a", "b", "c"))


def test_given_a_policy_floor_when_the_scorer_has_its_own_then_the_policy_floor_wins() -> None:
    scores = [("a", 0.4), ("b", 0.3)]
    strict = decide_tier2(scores, None, RoutingPolicy(floor=0.5), floor=0.0)
    assert strict.kind == "unmatched"
    lenient = decide_tier2(scores, None, RoutingPolicy(floor=0.0), floor=0.5)
    assert lenient.kind == "menu"


def test_given_a_single_candidate_when_decided_then_it_is_decisive_however_low() -> None:
    verdict = decide_tier2([("only", 0.01)], None, POLICY)
    assert (verdict.kind, verdict.to, verdict.decisive, verdict.runner_up) == (
        "move", "only", True, None,
    )


def test_given_one_candidate_above_the_floor_when_others_are_at_it_then_the_lone_one_is_decisive(
) -> None:
    verdict = decide_tier2([("a", 0.0), ("b", 0.05)], None, POLICY, floor=0.0)
    assert (verdict.kind, verdict.to, verdict.decisive) == ("move", "b", True)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_given_a_non_finite_score_when_decided_then_it_never_wins(bad: float) -> None:
    verdict = decide_tier2([("bad", bad), ("good", 0.2)], None, POLICY)
    assert (verdict.kind, verdict.to) == ("move", "good")
    assert verdict.scores == (("good", 0.2), ("bad", -math.inf))
    assert dict(verdict.relevance)["bad"] == 0.0


def test_given_only_non_finite_scores_when_decided_then_unmatched_with_zero_relevance() -> None:
    verdict = decide_tier2([("a", math.nan), ("b", math.inf)], None, POLICY)
    assert verdict.kind == "unmatched"
    assert verdict.relevance == (("a", 0.0), ("b", 0.0))


def test_given_a_categorical_scorer_when_scores_nearly_tie_then_the_top_is_decisive() -> None:
    verdict = decide_tier2([("a", 0.51), ("b", 0.5)], None, POLICY, categorical=True)
    assert (verdict.kind, verdict.to, verdict.decisive) == ("move", "a", True)


def test_given_a_far_third_candidate_when_a_menu_forms_then_only_near_ones_are_offered() -> None:
    verdict = decide_tier2([("c", 0.1), ("a", 0.5), ("b", 0.45)], None, POLICY)
    assert verdict.offered == ("a", "b")


@pytest.mark.parametrize(("size", "offered"), [(1, 2), (2, 2), (3, 3), (4, 4), (9, 5)])
def test_given_a_menu_size_when_many_tie_then_at_most_max_2_size_are_offered(
    size: int, offered: int
) -> None:
    scores = [(f"s{i}", 0.3) for i in range(5)]
    verdict = decide_tier2(scores, None, RoutingPolicy(menu_size=size))
    assert verdict.offered == tuple(f"s{i}" for i in range(offered))


def test_given_scores_when_decided_then_ranked_best_first_ties_kept_in_order_with_softmax(
) -> None:
    verdict = decide_tier2([("a", 0.0), ("b", 1.0), ("c", 0.0)], None, POLICY)
    assert [cid for cid, _ in verdict.scores] == ["b", "a", "c"]
    shares = dict(verdict.relevance)
    total = math.e + 2
    assert shares == pytest.approx({"b": math.e / total, "a": 1 / total, "c": 1 / total})


@pytest.mark.parametrize(
    "kwargs",
    [{"near_tie_margin": -0.1}, {"near_tie_margin": math.nan}, {"near_tie_margin": 2},
     {"menu_size": 0}, {"menu_size": True}, {"menu_size": 2.0}, {"floor": math.inf}],
)
def test_given_a_bad_policy_value_when_constructed_then_config_error_quotes_it(
    kwargs: dict[str, object],
) -> None:
    ((name, value),) = kwargs.items()
    with pytest.raises(ConfigError, match=f"{name}={value!r}"):
        RoutingPolicy(**kwargs)  # type: ignore[arg-type]


# ── keyword scorer ─────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Refunds, please!", {"refund"}),
        ("my class pass bus", {"class", "pass", "bus"}),
        ("A to Z of the API v2", {"api", "v2"}),
        ("gas  cards\tISSUES", {"gas", "card", "issue"}),
        ("café", {"caf"}),
        ("", set()),
    ],
)
def test_given_text_when_tokenised_then_lowercase_split_short_and_stop_words_dropped_s_folded(
    text: str, tokens: set[str]
) -> None:
    assert keyword_tokens(text) == frozenset(tokens)


def test_given_the_keyword_scorer_when_inspected_then_it_declares_name_floor_and_ranking() -> None:
    scorer = KeywordScorer()
    assert (scorer.name, scorer.floor, scorer.categorical) == ("keyword", 0.0, False)
    assert isinstance(scorer, Scorer)


def test_given_candidates_when_the_keyword_scorer_scores_then_it_is_the_set_cosine() -> None:
    scores = KeywordScorer().score(
        "refunds for my card",
        [("refunds", "refund money back"), ("shipping", "shipping address"),
         ("cards", "card refund")],
    )
    assert list(scores) == pytest.approx([1 / math.sqrt(6), 0.0, 1.0])


def test_given_a_message_when_scored_and_decided_then_the_best_overlap_moves_cold() -> None:
    scorer = KeywordScorer()
    candidates = [("billing", "refund a charge on my card"), ("shipping", "track a parcel")]
    scores = scorer.score("I need a refund on a card charge", candidates)
    verdict = decide_tier2(
        list(zip([c for c, _ in candidates], scores, strict=True)), None, POLICY,
        floor=scorer.floor,
    )
    assert (verdict.kind, verdict.to) == ("move", "billing")


# ── properties ─────────────────────────────────────────────────────────────

_SCORE = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5).map(float)
_IDS = st.lists(st.sampled_from(list("abcdefgh")), min_size=0, max_size=8, unique=True)


@given(
    ids=_IDS, data=st.data(), incumbent=st.none() | st.sampled_from(list("abcx")),
    margin=st.floats(0, 1), size=st.integers(1, 6),
    floor=st.none() | st.floats(-2, 2), categorical=st.booleans(),
)
def test_given_any_scores_when_decided_then_the_winner_is_finite_and_offers_are_candidates(
    ids: list[str], data: st.DataObject, incumbent: str | None, margin: float, size: int,
    floor: float | None, categorical: bool,
) -> None:
    raw = {cid: data.draw(_SCORE) for cid in ids}
    policy = RoutingPolicy(near_tie_margin=margin, menu_size=size)
    verdict = decide_tier2(list(raw.items()), incumbent, policy, floor=floor,
                           categorical=categorical)
    assert set(verdict.offered) <= set(ids)
    assert len(verdict.offered) <= max(2, size)
    if verdict.kind == "move":
        assert verdict.to in raw and math.isfinite(raw[verdict.to])
        assert floor is None or raw[verdict.to] > floor
    if verdict.kind == "stay":
        assert verdict.to == incumbent
    if verdict.kind in ("menu", "unmatched"):
        assert verdict.to is None
    assert verdict == decide_tier2(list(raw.items()), incumbent, policy, floor=floor,
                                   categorical=categorical)


@given(query=st.text(max_size=80), bodies=st.lists(st.text(max_size=80), max_size=5))
def test_given_any_texts_when_keyword_scored_then_scores_lie_in_0_1_and_match_the_cosine(
    query: str, bodies: list[str]
) -> None:
    scores = KeywordScorer().score(query, [(str(i), b) for i, b in enumerate(bodies)])
    assert len(scores) == len(bodies)
    for body, value in zip(bodies, scores, strict=True):
        assert 0.0 <= value <= 1.0 + 1e-12
        assert value == set_cosine(keyword_tokens(query), keyword_tokens(body))
        if keyword_tokens(query) and keyword_tokens(query) == keyword_tokens(body):
            assert value == pytest.approx(1.0)
