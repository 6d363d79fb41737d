"""Each why tier names its trials in its own words, from one table (``lens.explain._tier``).

The re-run tier (``--agent``) re-runs the agent; the re-send tier (``--resend``)
re-sends one request. The same report, verdicts and notes read right in
both, and no report text is reworded after it is made.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lens.explain._report import Baseline, ResendInfo, Suspect, WhyReport, render_why, tier_of
from lens.explain._resend_why import SCOPE, render_resend
from lens.explain._stats import Tally, judge
from lens.explain._tier import Tier

EXPLAIN = Path(__file__).resolve().parents[2] / "lens" / "explain"
_INFO = ResendInfo(provider="p", request="llm#1", pieces=3, planned_calls=40, scope=SCOPE)


def _suspect(rank: int, verdict: str, note: str = "") -> Suspect:
    return Suspect(rank=rank, kind="injection", id=f"s{rank}", ids=None, label=f"fact 's{rank}'",
                   flavor=None, step_id="llm#1", score=0.5, chain=(), excerpt="",
                   verdict=verdict, runs=4, flips=2 if verdict != "not-confirmed" else 0,
                   broke=1 if verdict == "broke" else 0, confidence=0.9,
                   removal=f"without 's{rank}'", note=note, removable=True)  # type: ignore[arg-type]


def _report(tier: Tier) -> WhyReport:
    return WhyReport(
        run_id="r", step="llm#1", answer="149 EUR", outcome="a", comparator="facts",
        comparator_mode="facts", mode="CAUSAL", conclusion="inconclusive",
        conclusion_text="…", seeds=12, alpha=0.05, alpha_per_test=0.0125, reruns=20,
        baseline=Baseline(runs=12, same=12, changed=0, broke=0, stable=True),
        suspects=(_suspect(1, "confirmed"), _suspect(2, "inconclusive"), _suspect(3, "broke"),
                  _suspect(4, "not-confirmed")),
        resend=_INFO if tier is Tier.RESEND else None)


@pytest.mark.parametrize("tier", list(Tier))
def test_given_a_report_of_each_tier_when_rendered_then_it_names_only_its_own_trials(
    tier: Tier,
) -> None:
    report = _report(tier)
    other = next(t for t in Tier if t is not tier).words
    text = "\n".join(render_why(report)).replace(SCOPE, "")
    assert tier_of(report) is tier
    assert f"counterfactual {tier.words.trials};" in text
    assert f"baseline: {tier.words.unchanged} reproduced the outcome in 12/12 live " \
           f"{tier.words.trials}" in text
    assert f"\n{tier.words.trials}: 20 · model calls" in text
    assert f"the outcome changed in 2/4 {tier.words.trials}" in text  # the confirmed verdict
    assert f"inconclusive — without 's2': changed in 2/4 {tier.words.trials}" in text
    assert f"the {tier.words.trials} raised or never answered" in text  # the broken one
    assert not re.search(rf"\b{other.trial}|{other.unchanged}", text), text


def test_given_a_resent_report_when_rendered_for_the_cli_then_the_request_line_comes_second(
) -> None:
    lines = render_resend(_report(Tier.RESEND))
    assert lines[1] == "re-sent: the recorded request of llm#1 (3 pieces) through 'p', 20 calls"
    assert "re-run" not in "\n".join(lines)


@pytest.mark.parametrize("tier", list(Tier))
@pytest.mark.parametrize(("base", "arm", "note"), [
    (Tally(same=8), Tally(broke=3), "every {trial} raised or never answered"),
    (Tally(same=8), Tally(), "no {trial} made"),
    (Tally(same=8), Tally(changed=1, broke=3), "3/4 {trials} raised or never answered"),
    (Tally(same=4, changed=4), Tally(changed=4), "{unchanged}'s own answers vary too much"),
])
def test_given_a_trial_tally_when_judged_in_a_tiers_words_then_its_note_uses_them(
    tier: Tier, base: Tally, arm: Tally, note: str,
) -> None:
    w = tier.words
    got = judge(base, arm, 0.05, 8, w)
    assert got.note == note.format(trial=w.trial, trials=w.trials, unchanged=w.unchanged)


def test_given_the_tier_table_when_read_then_each_tier_has_its_own_words() -> None:
    assert {t.words.trial for t in Tier} == {"re-run", "re-send"}
    assert all(t.words.trials == t.words.trial + "s" for t in Tier)
    assert Tier.RESEND.words.unchanged == "the unchanged request"


def test_given_the_explain_sources_when_read_then_no_report_text_is_reworded_by_replace(
) -> None:
    reworded = re.compile(r"""\.replace\(\s*["'](re-run|re-send|the unchanged)""")
    found = [f"{p.name}:{i}" for p in sorted(EXPLAIN.glob("*.py"))
             for i, line in enumerate(p.read_text("utf-8").splitlines(), 1)
             if reworded.search(line)]
    assert found == []
