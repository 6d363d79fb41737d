"""Why names the sentence (or line) of a confirmed piece its value comes from.

Every model here is a function of its request: it answers from the system text the
way a model would read one sentence of it. The search must name the planted
sentence exactly, as a set when only two together matter, as each when each
matters, and "unknown" when the budget ends first."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint import (
    Agent,
    FunctionModel,
    ListSink,
    SeededIds,
    StepClock,
    define_fact,
    tool,
)
from footprint.events import EventSink
from footprint.providers import LLMRequest, Reply, ToolCall
from lens import why
from lens.explain._report import render_why, schema, why_dict
from lens.explain._sentences import segment, without_units

FILLER = ("Refunds are handled by the billing team. Orders ship from the Berlin warehouse. "
          "Returns are free within 14 days. Support answers within two working days. "
          "Gift cards never expire. The warranty covers two years of normal use. "
          "Invoices are sent by e-mail. Prices include VAT.")


def _make(model: Callable[[LLMRequest], Reply], policy: str) -> Callable[..., Agent]:
    def make(sink: EventSink | None = None, seed: int = 0) -> Agent:
        return Agent(provider=FunctionModel(model), model="m", clock=StepClock(), seed=seed,
                     sink=sink, injections=[define_fact("shipping", "The grinder ships in 2 "
                                                        "days."),
                                            define_fact("policy", policy)])
    return make


def _why(model: Callable[[LLMRequest], Reply], policy: str, **kw: Any) -> Any:
    make = _make(model, policy)
    sink = ListSink()
    run = make(sink=sink).variant(ids=SeededIds(7)).run_sync("What does the grinder cost?")
    return why(list(sink.events), run.run_id, agent=make, **kw)


def _price(has: Callable[[str], bool]) -> Callable[[LLMRequest], Reply]:
    def model(request: LLMRequest) -> Reply:
        return f"The grinder costs {'149' if has(request.system) else '189'} EUR."
    return model


def _named(report: Any) -> list[str]:
    return [s.text for c in report.sentences for s in c.spans]


def test_given_one_planted_sentence_in_a_long_fact_when_explained_then_it_is_named_exactly(
) -> None:
    planted = "The winter sale price is 149 EUR."
    policy = FILLER.replace("Gift cards never expire.", f"Gift cards never expire. {planted}")
    report = _why(_price(lambda s: "sale price is 149" in s), policy)
    (claim,) = report.sentences
    assert claim.kind == "sentence" and _named(report) == [planted]
    span = claim.spans[0]
    assert claim.text == policy and policy[span.start:span.end] == planted
    assert claim.experiments[0].verdict == "confirmed" and claim.trials > 0
    assert any(c.kind == "sentence" for c in report.claims)
    text = "\n".join(render_why(report))
    assert f"of fact 'policy': “{planted}”" in text.splitlines()[2]  # the headline


def test_given_two_sentences_each_needed_when_explained_then_both_are_named_each_confirmed(
) -> None:
    a, b = "The threshold is 1000 EUR.", "Refunds under the threshold pass unreviewed."
    policy = FILLER.replace("Gift cards never expire.", f"{a} Gift cards never expire.")
    policy = policy.replace("Prices include VAT.", f"Prices include VAT. {b}")
    report = _why(_price(lambda s: "1000 EUR" in s and "pass unreviewed" in s), policy)
    (claim,) = report.sentences
    assert claim.kind == "each" and sorted(_named(report)) == sorted([a, b])
    assert [e.verdict for e in claim.experiments] == ["confirmed", "confirmed"]


def test_given_two_sentences_either_enough_when_explained_then_they_are_named_as_a_set(
) -> None:
    a, b = "The sale price is 149 EUR.", "Members pay 149 EUR."
    policy = FILLER.replace("Returns are free", f"{a} Returns are free").replace(
        "Invoices are", f"{b} Invoices are")
    report = _why(_price(lambda s: "149 EUR" in s), policy)
    (claim,) = report.sentences
    assert claim.kind == "together" and sorted(_named(report)) == sorted([a, b])
    joint, *alone = claim.experiments
    assert joint.verdict == "confirmed" and [e.verdict for e in alone] == ["not-confirmed"] * 2
    assert "only removed together" in "\n".join(render_why(report))


def test_given_a_fact_of_one_sentence_when_explained_then_it_is_whole_and_costs_nothing(
) -> None:
    report = _why(_price(lambda s: "149" in s), "The sale price is 149 EUR.")
    (claim,) = report.sentences
    assert claim.kind == "whole" and claim.trials == 0 and claim.units == 1
    assert not any(c.kind == "sentence" for c in report.claims)


def test_given_abbreviations_and_decimals_when_split_then_the_sentence_stays_whole() -> None:
    planted = "Dr. Smith pays 3.50 EUR."
    policy = ("The clinic opens at 9 a.m. on weekdays. Prof. Lee pays 12.75 EUR. "
              f"{planted} The fee is e.g. shown on the invoice. Mr. Brown pays 4.10 EUR.")

    def model(request: LLMRequest) -> Reply:
        return f"Dr. Smith owes {'3.50' if 'Smith pays 3.50' in request.system else '0'} EUR."

    report = _why(model, policy)
    assert [c.kind for c in report.sentences] == ["sentence"] and _named(report) == [planted]
    assert [u.text for u in segment(policy)][2] == planted
    assert len(segment(policy)) == 5  # a split at every ". " would cut nine pieces


def test_given_german_text_when_split_then_abbreviations_and_decimal_commas_stay_whole(
) -> None:
    planted = "Der Sonderpreis beträgt z. B. 149,00 € pro Stück."
    policy = ("Die Lieferung dauert ca. 2 Tage. Rücksendungen sind 14 Tage kostenlos. "
              f"{planted} Die Rechnung kommt per E-Mail. Dr. Weber prüft jede Erstattung.")
    assert [u.text for u in segment(policy)] == [
        "Die Lieferung dauert ca. 2 Tage.", "Rücksendungen sind 14 Tage kostenlos.", planted,
        "Die Rechnung kommt per E-Mail.", "Dr. Weber prüft jede Erstattung."]
    report = _why(_price(lambda s: "149,00 €" in s), policy)
    assert _named(report) == [planted]


@pytest.mark.parametrize(("text", "sentences"), [
    ("La livraison prend env. 2 jours. M. Dupont paie 3,50 € par mois, c.-à-d. moins "
     "qu'avant. La facture arrive par e-mail.",
     ["La livraison prend env. 2 jours.", "M. Dupont paie 3,50 € par mois, c.-à-d. moins "
      "qu'avant.", "La facture arrive par e-mail."]),
    ("La consegna richiede ca. 2 giorni. Il Sig. Rossi paga 3,50 € al mese. La fattura "
     "arriva per e-mail.",
     ["La consegna richiede ca. 2 giorni.", "Il Sig. Rossi paga 3,50 € al mese.",
      "La fattura arriva per e-mail."]),
    ("A entrega leva aprox. 2 dias. O Sr. Silva paga R$ 3,50 por mês. A fatura chega por "
     "e-mail.",
     ["A entrega leva aprox. 2 dias.", "O Sr. Silva paga R$ 3,50 por mês.",
      "A fatura chega por e-mail."]),
    ("El envío tarda aprox. 2 días. La Sra. García paga 3,50 € al mes. La factura llega.",
     ["El envío tarda aprox. 2 días.", "La Sra. García paga 3,50 € al mes.",
      "La factura llega."]),
    ("这是第一句。价格是149欧元！这是第三句。",
     ["这是第一句。", "价格是149欧元！", "这是第三句。"]),
])
def test_given_text_in_another_language_when_split_then_abbreviations_stay_inside(
        text: str, sentences: list[str]) -> None:
    assert [u.text for u in segment(text)] == sentences


def test_given_a_table_when_split_then_each_row_is_a_line_and_the_wrong_row_is_named() -> None:
    rows = ["Model | Weight", "Vela P1 | 2.4 kg", "Vela P2 | 2.1 kg", "Vela P3 | 1.9 kg",
            "Vela P4 | 1.7 kg", "Vela P5 | 1.5 kg"]

    def model(request: LLMRequest) -> Reply:
        return f"The grinder weighs {'1.9' if 'P3 | 1.9' in request.system else '2.0'} kg."

    report = _why(model, "\n".join(rows))
    (claim,) = report.sentences
    assert [s.where for s in claim.spans] == ["line 4"] and _named(report) == [rows[3]]


def test_given_no_sentences_when_explained_then_no_sentence_trial_is_made() -> None:
    planted = "The winter sale price is 149 EUR."
    model = _price(lambda s: "sale price is 149" in s)
    policy = f"{FILLER} {planted}"
    plans: list[str] = []
    off = _why(model, policy, sentences=False, plan=plans.append)
    on = _why(model, policy)
    assert off.sentences == () and on.sentences
    assert on.reruns - off.reruns == on.sentences[0].trials
    (plan,) = plans
    assert plan.splitlines()[1] == "plan: no sentence search (--no-sentences)"


def test_given_a_budget_spent_in_the_sentence_search_then_the_sentence_is_unknown() -> None:
    planted = "The winter sale price is 149 EUR."
    model = _price(lambda s: "sale price is 149" in s)
    full = _why(model, f"{FILLER} {planted}")
    report = _why(model, f"{FILLER} {planted}", budget=full.reruns - full.sentences[0].trials + 2)
    (claim,) = report.sentences
    assert claim.kind == "unknown" and claim.spans == () and "budget" in claim.note
    assert "unknown" in "\n".join(render_why(report))


def test_given_a_sentence_claim_when_written_as_json_then_it_validates_and_names_offsets(
) -> None:
    planted = "The winter sale price is 149 EUR."
    report = _why(_price(lambda s: "sale price is 149" in s), f"{FILLER} {planted}")
    data = why_dict(report)
    jsonschema.validate(data, schema())
    (claim,) = data["sentences"]
    assert claim["spans"][0]["text"] == planted and claim["experiments"][0]["flips"] > 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "sentences": [{**claim, "kind": "guess"}]}, schema())


_WORDS = st.sampled_from(["price", "grinder", "ships", "refund", "within", "days", "costs",
                          "the", "team", "warehouse", "invoice", "never", "1.9", "3,50", "EUR"])
_SENTENCE = st.tuples(st.lists(_WORDS, min_size=2, max_size=6), st.sampled_from(".!?")).map(
    lambda t: " ".join(t[0]).capitalize() + t[1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_SENTENCE, min_size=1, max_size=4), min_size=1, max_size=5),
       st.data())
def test_given_any_lines_of_sentences_when_some_are_cut_then_the_rest_stays_in_order(
        lines: list[list[str]], data: st.DataObject) -> None:
    text = "\n".join(" ".join(line) for line in lines)
    units = segment(text, "en")
    assert [u.text for u in units] == [s for line in lines for s in line]
    assert all(text[u.start:u.end] == u.text for u in units)
    drop = data.draw(st.sets(st.sampled_from([u.index for u in units])))
    kept = without_units(text, units, drop)
    assert kept.split() == " ".join(u.text for u in units if u.index not in drop).split()
    assert len(kept.splitlines()) == len({u.line for u in units if u.index not in drop})


def test_given_the_resend_tier_when_a_document_is_confirmed_then_its_sentence_is_named(
) -> None:
    planted = "The winter sale price is 149 EUR."
    model = _price(lambda s: "sale price is 149" in s)
    make = _make(model, f"{FILLER} {planted}")
    sink = ListSink()
    run = make(sink=sink).variant(ids=SeededIds(7)).run_sync("What does the grinder cost?")
    report = why(list(sink.events), run.run_id, resend=FunctionModel(model))
    (claim,) = report.sentences
    assert claim.kind == "sentence" and _named(report) == [planted]
    assert claim.model_calls == claim.trials > 0
    jsonschema.validate(why_dict(report), schema())


_FILLERS = [s.strip() + "." for s in FILLER.split(".") if s.strip()]


@settings(max_examples=12, deadline=None)
@given(st.integers(min_value=2, max_value=24), st.data())
def test_given_a_planted_sentence_anywhere_when_resent_then_it_is_named_within_the_goal(
        n: int, data: st.DataObject) -> None:
    at = data.draw(st.integers(min_value=0, max_value=n - 1))
    planted = "The winter sale price is 149 EUR."
    body = [_FILLERS[i % len(_FILLERS)] for i in range(n - 1)]
    policy = " ".join([*body[:at], planted, *body[at:]])
    model = _price(lambda s: "sale price is 149" in s)
    sink = ListSink()
    make = _make(model, policy)
    run = make(sink=sink).variant(ids=SeededIds(7)).run_sync("What does the grinder cost?")
    report = why(list(sink.events), run.run_id, resend=FunctionModel(model))
    (claim,) = report.sentences
    assert claim.kind == "sentence" and _named(report) == [planted]
    assert claim.spans[0].where == f"sentence {at + 1}"
    assert claim.model_calls <= 2 * math.log2(n) * report.seeds


def policy_lookup(topic: str) -> str:
    """Look a policy up (its text is FILLER with the sale price inside)."""
    return FILLER.replace("Gift cards never expire.", "The winter sale price is 149 EUR.")


def _reads_tool(request: LLMRequest) -> Reply:
    results = [m for m in request.messages if m.role == "tool"]
    if not results:
        return ToolCall(id="", name="policy_lookup", arguments={"topic": "price"})
    return f"It costs {'149' if 'sale price is 149' in results[-1].content else '189'} EUR."


def test_given_a_tool_result_confirmed_when_explained_then_its_sentence_is_named() -> None:
    def make(sink: EventSink | None = None, seed: int = 0) -> Agent:
        return Agent(provider=FunctionModel(_reads_tool), model="m", clock=StepClock(),
                     seed=seed, sink=sink, tools=[tool(policy_lookup)], max_iterations=4,
                     injections=[define_fact("shipping", "The grinder ships in 2 days.")])

    sink = ListSink()
    run = make(sink=sink).variant(ids=SeededIds(7)).run_sync("What does the grinder cost?")
    report = why(list(sink.events), run.run_id, agent=make)
    (claim,) = report.sentences
    assert claim.piece.startswith("tool policy_lookup") and claim.kind == "sentence"
    assert _named(report) == ["The winter sale price is 149 EUR."]
    assert claim.text == policy_lookup("price")
