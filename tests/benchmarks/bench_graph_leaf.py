"""Skill-graph leaf figures: the per-hop cost of guards, matchers and tier-2 routing.

``guard_evaluate_json_us``: median µs for one ``CompiledGuard.evaluate`` of a
4-condition guard (three JSON fields, one hop key) on a ~200-byte JSON result
- this runs per route, per tool result, per iteration. Target: <= 25 µs.
``guard_evaluate_hop_only_us``: the same for a 2-condition guard on hop keys
only (no JSON parse). Target: <= 8 µs.
``matcher_keywords_miss_us`` / ``matcher_keywords_hit_us``: median µs for one
``CompiledMatcher.search`` of 8 keywords over a 300-char message.
``decide_tier2_20_us``: ``decide_tier2`` over 20 candidates.
``keyword_scorer_20_us``: ``KeywordScorer.score`` of a message against 20
intent texts (tokenisation included).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from footprint.graph._guards import Hop, compile_guard
from footprint.graph._matchers import Keywords, compile_matcher
from footprint.graph._routing import KeywordScorer, RoutingPolicy, decide_tier2


def median_us(fn: Callable[[], object], repeats: int, inner: int = 200) -> float:
    """Median over ``repeats`` samples of the mean µs of ``inner`` calls."""
    clock = time.perf_counter_ns
    samples: list[float] = []
    for _ in range(repeats):
        started = clock()
        for _ in range(inner):
            fn()
        samples.append((clock() - started) / inner)
    return statistics.median(samples) / 1000.0


def _guard_figures(repeats: int) -> dict[str, float]:
    body = {"riskLevel": "severe", "score": 7.5, "tier": "gold",
            "notes": "x" * 120, "items": [1, 2, 3]}
    hop = Hop(tool_name="probe", result=json.dumps(body), status="success", iteration=3,
              user_message="check the account", current_skill_id="triage")
    json_guard = compile_guard(
        {"riskLevel": {"gte": "high"}, "score": {"gt": 5}, "tier": {"notIn": ["free"]},
         "status": {"eq": "success"}},
        where="bench route",
    )
    hop_guard = compile_guard(
        {"toolName": {"eq": "probe"}, "iteration": {"lt": 10}}, where="bench route"
    )
    return {
        "guard_evaluate_json_us": median_us(lambda: json_guard.evaluate(hop), repeats),
        "guard_evaluate_hop_only_us": median_us(lambda: hop_guard.evaluate(hop), repeats),
    }


def _matcher_figures(repeats: int) -> dict[str, float]:
    matcher = compile_matcher(
        Keywords(("refund", "chargeback", "visa card", "dispute", "overcharged", "money back",
                  "billing error", "v2?")),
        where="bench entry",
    )
    filler = "please look at my account settings and shipping address " * 5
    miss, hit = filler[:300], filler[:280] + " a refund"
    return {
        "matcher_keywords_miss_us": median_us(lambda: matcher.search(miss), repeats),
        "matcher_keywords_hit_us": median_us(lambda: matcher.search(hit), repeats),
    }


def _routing_figures(repeats: int) -> dict[str, float]:
    scores = [(f"skill_{i}", (i * 37 % 20) / 20) for i in range(20)]
    policy = RoutingPolicy()
    scorer = KeywordScorer()
    intents = [(f"skill_{i}", f"intent {i} about topic{i} with example requests {i * 3}")
               for i in range(20)]
    text = "I have a question about topic7 and example requests for my account"
    return {
        "decide_tier2_20_us": median_us(lambda: decide_tier2(scores, None, policy), repeats),
        "keyword_scorer_20_us": median_us(lambda: scorer.score(text, intents), repeats, 50),
    }


def figures(quick: bool) -> dict[str, float]:
    repeats = 5 if quick else 25
    return {**_guard_figures(repeats), **_matcher_figures(repeats), **_routing_figures(repeats)}


if __name__ == "__main__":
    for name, value in figures(quick=False).items():
        print(f"{name}: {value:.2f}")
