"""Planted long pieces for the sentence search: one wrong sentence or line (or two) inside a
long fact, and a model that reads just that sentence, as a function of its request.

Each case knows the sentences a correct search names, and how it names them
(``sentence``, ``each``, ``together``). Used by tests/benchmarks/bench_why_sentences.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from footprint import Agent, FunctionModel, ListSink, SeededIds, StepClock, define_fact
from footprint.events import EventSink
from footprint.providers import LLMRequest, Reply

PROSE = ["Refunds are handled by the billing team.", "Orders ship from the Berlin warehouse.",
         "Returns are free within 14 days.", "Support answers within two working days.",
         "Gift cards never expire.", "The warranty covers two years of normal use.",
         "Invoices are sent by e-mail.", "Prices include VAT.",
         "Grinders are packed in recycled cardboard.", "Spare burrs are sold separately.",
         "The manual is printed in four languages.", "Descaling is not needed.",
         "Customers in Austria pay no shipping.", "Bulk orders get a quote within a day.",
         "The café edition has a larger hopper.", "Payment by invoice needs an account."]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    name: str
    piece: str
    """The long fact's text."""
    planted: tuple[str, ...]
    """The sentence(s) or line(s) a correct search names, exactly."""
    kind: str
    model: Callable[[LLMRequest], Reply]
    question: str = "What does the grinder cost?"


def _prose(n: int, at: dict[int, str]) -> str:
    out: list[str] = []
    for i in range(n):
        if i in at:
            out.append(at[i])
        out.append(PROSE[i % len(PROSE)])
    return " ".join(out)


def _answers(says: Callable[[str], bool], yes: str, no: str) -> Callable[[LLMRequest], Reply]:
    def model(request: LLMRequest) -> Reply:
        return yes if says(request.system) else no
    return model


def _table() -> tuple[str, str]:
    rows = [f"Vela P{i} part {i:02d}: {1.0 + i / 10:.1f} kg" for i in range(1, 41)]
    rows[22] = "Weight (without base): 1.9 kg"
    return "\n".join(rows), rows[22]


def cases() -> list[Case]:
    """Every planted case (module doc)."""
    table, row = _table()
    sale = "The winter sale price is 149 EUR."
    dr = "Dr. Smith pays 3.50 EUR for the U.S. edition, i.e. per copy."
    it = "Il Sig. Rossi paga 3,50 € al mese."
    de = "Der Sonderpreis beträgt z. B. 149,00 € pro Stück."
    fr = "M. Dupont paie 3,50 € par mois, c.-à-d. moins qu'avant."
    a, b = "The threshold is 1000 EUR.", "Refunds under the threshold pass unreviewed."
    m1, m2 = "The sale price is 149 EUR.", "Members pay 149 EUR."
    items = "\n".join(f"- {p}" for p in PROSE[:11]) + "\n- Express delivery costs 29 EUR.\n" + \
        "\n".join(f"- {p}" for p in PROSE[11:])
    return [
        Case(name="prose_8", piece=_prose(8, {5: sale}), planted=(sale,), kind="sentence",
             model=_answers(lambda s: "sale price is 149" in s, "It costs 149 EUR.",
                            "It costs 189 EUR.")),
        Case(name="prose_32", piece=_prose(32, {27: sale}), planted=(sale,), kind="sentence",
             model=_answers(lambda s: "sale price is 149" in s, "It costs 149 EUR.",
                            "It costs 189 EUR.")),
        Case(name="table_40_lines", piece=table, planted=(row,), kind="sentence",
             model=_answers(lambda s: "base): 1.9 kg" in s, "It weighs 1.9 kg.",
                            "It weighs 2.4 kg."), question="What does it weigh?"),
        Case(name="list_16_items", piece=items, planted=("- Express delivery costs 29 EUR.",),
             kind="sentence", model=_answers(lambda s: "costs 29 EUR" in s,
                                             "Express costs 29 EUR.", "Express costs 19 EUR.")),
        Case(name="abbreviations_decimals", piece=_prose(8, {3: dr}), planted=(dr,),
             kind="sentence", model=_answers(lambda s: "Smith pays 3.50" in s,
                                             "Dr. Smith owes 3.50 EUR.", "Dr. Smith owes 0 EUR.")),
        Case(name="german", piece=("Die Lieferung dauert ca. 2 Tage. Rücksendungen sind 14 "
                                   f"Tage kostenlos. {de} Die Rechnung kommt per E-Mail. Dr. "
                                   "Weber prüft jede Erstattung. Der Versand ist frei."),
             planted=(de,), kind="sentence",
             model=_answers(lambda s: "149,00 €" in s, "Er kostet 149,00 €.",
                            "Er kostet 189,00 €.")),
        Case(name="french", piece=("La livraison prend env. 2 jours. Les retours sont gratuits. "
                                   f"{fr} La facture arrive par e-mail. Le service est ouvert."),
             planted=(fr,), kind="sentence",
             model=_answers(lambda s: "paie 3,50" in s, "Il paie 3,50 €.", "Il paie 5,00 €.")),
        Case(name="italian", piece=("La consegna richiede ca. 2 giorni. I resi sono gratuiti. "
                                    f"{it} La fattura arriva per e-mail. Il servizio è aperto."),
             planted=(it,), kind="sentence",
             model=_answers(lambda s: "paga 3,50" in s, "Paga 3,50 €.", "Paga 5,00 €.")),
        Case(name="two_each_needed", piece=_prose(10, {2: a, 8: b}), planted=(a, b),
             kind="each", model=_answers(lambda s: "1000 EUR" in s and "pass unreviewed" in s,
                                         "APPROVED: 450 EUR.", "PENDING-REVIEW: 450 EUR.")),
        Case(name="two_together", piece=_prose(10, {1: m1, 7: m2}), planted=(m1, m2),
             kind="together", model=_answers(lambda s: "149 EUR" in s, "It costs 149 EUR.",
                                              "It costs 189 EUR.")),
    ]


def agent_of(case: Case) -> Callable[..., Agent]:
    """The case's agent factory (a decoy fact beside the long one)."""
    def make(sink: EventSink | None = None, seed: int = 0) -> Agent:
        return Agent(provider=FunctionModel(case.model), model="m", clock=StepClock(),
                     seed=seed, sink=sink, injections=[
                         define_fact("shipping", "The grinder ships in 2 days."),
                         define_fact("manual", case.piece)])
    return make


def recorded(case: Case) -> tuple[list[Any], str]:
    """The case's run: its events and run id."""
    sink = ListSink()
    run = agent_of(case)(sink=sink).variant(ids=SeededIds(7)).run_sync(case.question)
    return list(sink.events), run.run_id


def make_table_agent(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """The 40-line table case's agent, as ``--agent tests/sentence_cases.py:make_table_agent``
    names it (the lens test of a sentence-level claim)."""
    return agent_of(next(c for c in cases() if c.name == "table_40_lines"))(sink=sink,
                                                                            seed=seed)
