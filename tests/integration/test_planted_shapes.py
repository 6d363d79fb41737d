"""The planted shapes added for issue 33, each explained by `why` and headed by its root.

test_planted_examples.py checks that each culprit changes the answer and each decoy does not;
test_planted_why.py runs the checks every example shares (schema, first line, no decoy
confirmed, claims backed). Here: what each new shape is for — the mechanism on the path (a
tool call's argument, a guard and the value it read), the user's words as context, a fact
in another locale, a refusal fixed, a conjunction across turns.
"""

from __future__ import annotations

from typing import Any

import pytest
from planted_support import NEW_SHAPES, load

from footprint import ListSink
from footprint.events import LLMStart
from lens import why
from lens.explain._report import WhyReport


def _first_line(report: WhyReport) -> str:
    return f"{report.conclusion.upper()}: {report.conclusion_text}"


@pytest.fixture(scope="module")
def reports() -> dict[str, WhyReport]:
    """Each new shape recorded in memory and explained once."""
    done: dict[str, WhyReport] = {}
    for name in NEW_SHAPES:
        module = load(name)
        sink = ListSink()
        run = module.converse(module.make_agent(sink=sink))
        done[name] = why(sink.events, run.run_id, agent=module.make_agent)
    return done


@pytest.mark.parametrize(("name", "recorded", "fixed"), [
    ("user_gated_rule", "The annual pass costs 60 EUR for you.",
     "The annual pass costs 96 EUR for you."),
    ("zone_argument", "Shipping order K-5 to York costs 9 EUR.",
     "Shipping order K-5 to York costs 6 EUR."),
    ("rag_vs_instruction", "You can return the K2 kettle within 14 days of delivery.",
     "You can return the K2 kettle within 30 days of delivery."),
    ("locale_fact", "The C40 grinder costs €1,249.00 now.", "The C40 grinder costs €1,199.00 now."),
    ("refusal_wording", "I'm sorry, but I can't help with that.",
     "The C40 has steel burrs, not blades; they need no sharpening and last about 3 years."),
    ("cross_turn_pair", "Your Pro plan renews at 99 EUR.", "Your Pro plan renews at 79 EUR."),
    ("memory_guard", "Refund of 80 EUR for order R-9 issued automatically.",
     "Order R-9 (480 EUR) is waiting for a supervisor's review."),
    ("stepped_fee", "Shipping parcel P-3 costs 13 EUR.", "Shipping parcel P-3 costs 10 EUR."),
    ("escalated_fee", "The late-return fee for order R-4 is 15 EUR.",
     "The late-return fee for order R-4 is 5 EUR."),
])
def test_given_a_new_shape_when_its_culprit_is_removed_then_the_answer_is_the_fixed_one(
        name: str, recorded: str, fixed: str) -> None:
    module = load(name)
    assert module.converse(module.make_agent()).answer == recorded
    assert module.converse(module.make_agent().without(module.CULPRIT)).answer == fixed


def test_given_the_shapes_when_counted_then_each_is_new() -> None:
    assert len(NEW_SHAPES) == len(set(NEW_SHAPES)) >= 9


@pytest.mark.parametrize("name", NEW_SHAPES)
def test_given_a_new_shape_when_why_runs_then_its_culprit_heads_the_report(
        name: str, reports: dict[str, WhyReport]) -> None:
    report, culprit = reports[name], load(name).CULPRIT
    assert report.conclusion == "confirmed", _first_line(report)
    assert any(culprit in root for root in report.root_causes), report.root_causes
    assert report.path and culprit in report.path[0], report.path
    for decoy in load(name).INNOCENT:
        assert decoy not in _first_line(report), _first_line(report)


def test_given_a_rule_gated_by_what_the_user_said_when_why_runs_then_the_user_is_context_not_a_root(
        reports: dict[str, WhyReport]) -> None:
    module, report = load("user_gated_rule"), reports["user_gated_rule"]
    assert report.root_causes == ("instructions 'student-rate'",), report.conclusion_text
    assert report.user_said == (module.FIRST,)
    assert f"because the user said “{module.FIRST}”" in report.conclusion_text
    assert "conjunction" not in report.conclusion_text
    (said,) = [s for s in report.suspects if s.role == "context"]
    assert said.kind == "message" and said.flavor == "person" and said.verdict == "confirmed"
    assert report.path == ("instructions 'student-rate'", "answer (llm#1)")
    kinds = [(c.kind, c.names) for c in report.claims]
    assert kinds == [("cause", ("instructions 'student-rate'",)),
                     ("user-said", ("user message of turn 1",))], kinds


def test_given_a_stale_fact_acting_through_a_second_call_when_why_runs_then_the_path_shows_its_argument(  # noqa: E501
        reports: dict[str, WhyReport]) -> None:
    assert reports["zone_argument"].path == (
        "fact 'zones-2023'",
        'llm#2 chose shipping_rate(city="York", zone=3) (without fact \'zones-2023\': '
        'shipping_rate(city="York"))',
        'result #call_2: {"city": "York", "zone": 3, "rate": 9, "currency": "EUR"}',
        "answer (llm#3)")


def test_given_a_stale_memory_steering_a_guard_when_why_runs_then_the_path_shows_the_guard_and_its_value(  # noqa: E501
        reports: dict[str, WhyReport]) -> None:
    path = reports["memory_guard"].path
    assert path[0] == "fact 'memory-r9'" and path[-1] == "answer (llm#3)", path
    assert path[1] == ('llm#1 chose start_refund(order_id="R-9", amount=80.0) (without fact '
                       '\'memory-r9\': start_refund(order_id="R-9", amount=480.0))'), path
    assert path[2].startswith('result #call_1: {"order_id": "R-9", "amount": 80.0'), path
    assert path[3] == "guard amount lte 100 (saw 80.0) ✓ passed: routed billing→auto_refund"


def _suspect(report: WhyReport, piece: str) -> Any:
    return next(s for s in report.suspects if s.id == piece)


def test_given_a_fact_in_another_locale_when_why_runs_then_its_amount_is_read_as_the_same_value(
        reports: dict[str, WhyReport]) -> None:
    report = reports["locale_fact"]
    assert "(€1,249.00 → €1,199.00)" in _first_line(report), _first_line(report)
    assert load("locale_fact").converse(load("locale_fact").make_agent().without(
        "amount-style")).answer == "The C40 grinder costs 1249 EUR now."
    style = _suspect(report, "amount-style")
    assert style.verdict == "not-confirmed" and style.wording == ("'€1,249.00' → '1249 EUR'",)


def test_given_a_steering_whose_wording_refuses_when_why_runs_then_the_answer_it_gives_is_a_value(
        reports: dict[str, WhyReport]) -> None:
    report = reports["refusal_wording"]
    culprit = _suspect(report, "blade-safety")
    assert culprit.verdict == "confirmed" and culprit.effect == "value" and \
        culprit.role == "root"
    assert report.necessary == () and "+3 years" in _first_line(report), _first_line(report)


def test_given_two_causes_in_two_turns_when_why_runs_then_they_are_one_conjunction(
        reports: dict[str, WhyReport]) -> None:
    report = reports["cross_turn_pair"]
    assert set(report.root_causes) == {"fact 'renewal-memo-2023'",
                                       "assistant message llm#1 of turn 1"}
    (claim,) = report.claims
    assert claim.kind == "conjunction" and "(a conjunction)" in _first_line(report)
    assert all(e.verdict == "confirmed" for e in claim.experiments), claim


def test_given_a_document_contradicting_an_instruction_when_why_runs_then_the_instruction_is_innocent(  # noqa: E501
        reports: dict[str, WhyReport]) -> None:
    report = reports["rag_vs_instruction"]
    assert report.root_causes == ("rag 'returns-faq-2021'",)
    assert _suspect(report, "returns-policy").verdict == "not-confirmed"
    assert "(14 days → 30 days)" in _first_line(report)


def test_given_a_cause_in_a_stepped_skills_second_step_when_why_runs_then_it_acted_there_alone(
        reports: dict[str, WhyReport]) -> None:
    report = reports["stepped_fee"]
    memo = _suspect(report, "fee-memo-2022")
    assert memo.chain[0] == "LANDED system-prompt of llm#3", memo.chain
    assert report.path[1] == ('llm#3 chose price_parcel(parcel_id="P-3", kg=2, fee=7) (without '
                              'fact \'fee-memo-2022\': price_parcel(parcel_id="P-3", kg=2, '
                              'fee=4))'), report.path
    assert report.necessary == ("skill 'parcel-desk' (+tools price_parcel, weigh_parcel)",)


def test_given_a_cause_read_only_by_the_escalated_model_when_why_runs_then_it_is_the_root(
        reports: dict[str, WhyReport]) -> None:
    module = load("escalated_fee")
    sink = ListSink()
    module.converse(module.make_agent(sink=sink))
    brains = {e.step_id: (e.model, e.brain_via) for e in sink.events if isinstance(e, LLMStart)}
    report = reports["escalated_fee"]
    assert report.step == "llm#3" and brains["llm#3"] == ("desk-large", "escalation"), brains
    assert brains["llm#1"] == ("desk-small", None)
    assert report.root_causes == ("fact 'late-fee-2021'",), report.conclusion_text
    assert "(15 EUR → 5 EUR)" in _first_line(report)
