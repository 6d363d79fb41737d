"""Facts in six locales, each phrasing with the normal form it must give (issue: why v4).

Most phrasings are written by Babel's own formatters (CLDR data: the way each locale
writes an amount, a number, a date, a time, a weekday), a source independent of the
parsers that read them back; the rest are written by hand: the shapes Babel does not
make (an amount in a sentence, a range, spaces as separators, plural weekdays, number
words). ``why_facts_locale_cases`` in the benchmarks counts them.
"""

from __future__ import annotations

from datetime import date, time
from decimal import Decimal

import pytest
from babel.dates import format_date, format_time, get_day_names
from babel.numbers import format_currency, format_decimal, format_percent

from lens.explain._facts import facts

LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "pt_BR")
SENTENCE = {"en_US": "The total is {} for the order.", "en_GB": "The total is {} for the order.",
            "de_DE": "Der Preis ist {} für die Bestellung.",
            "fr_FR": "Le prix est de {} pour la commande.",
            "it_IT": "Il prezzo è di {} per l'ordine.", "pt_BR": "O preço é de {} para o pedido."}
AMOUNTS = ("810", "1620", "12.5", "3.5", "1234567.89", "0.99")
DATES = (date(2026, 3, 3), date(2026, 12, 25), date(2027, 1, 31), date(2028, 2, 29),
         date(2026, 5, 1))
TIMES = (time(13, 0), time(9, 30), time(0, 15), time(12, 0), time(18, 45))


def _n(text: str) -> str:
    return f"{Decimal(text).normalize():f}"


def _babel_cases() -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    cases = []
    for loc in LOCALES:
        say = SENTENCE[loc]
        for amount in AMOUNTS:
            for cur in ("EUR", "USD", "GBP"):
                text = say.format(format_currency(Decimal(amount), cur, locale=loc))
                cases.append((loc, text, (("money", f"{_n(amount)} {cur}"),)))
        for amount in ("1620", "12.5", "1234567.89", "3.25"):
            text = say.format(format_decimal(Decimal(amount), locale=loc) + " points")
            cases.append((loc, text, (("number", _n(amount)),)))
        for day in DATES:
            text = say.format(format_date(day, "long", locale=loc))
            cases.append((loc, text, (("date", day.isoformat()),)))
        for t in TIMES:
            text = say.format(format_time(t, "short", locale=loc))
            cases.append((loc, text, (("time", f"{t:%H:%M}"),)))
        for amount, unit, normal in (("3.5", "kg", "3.5 kg"), ("12.5", "km", "12500 m"),
                                     ("1.25", "l", "0.00125 m ** 3")):
            text = say.format(format_decimal(Decimal(amount), locale=loc) + " " + unit)
            cases.append((loc, text, (("quantity", normal),)))
        for share in ("0.15", "0.025"):
            text = say.format(format_percent(Decimal(share), "#,##0.0%", locale=loc))
            cases.append((loc, text, (("quantity", _n(share)),)))
        english = get_day_names("wide", locale="en_US")
        for index, name in get_day_names("wide", locale=loc).items():
            cases.append((loc, say.format(name), (("day", english[index].lower()),)))
    return cases


HAND: list[tuple[str, str, tuple[tuple[str, str], ...]]] = [
    ("de_DE", "Das kostet 810,00 €.", (("money", "810 EUR"),)),
    ("de_DE", "Gesamt: 1.620,00 € inklusive Versand.", (("money", "1620 EUR"),)),
    ("de_DE", "Von 12,50 EUR auf 12,90 EUR erhöht.",
     (("money", "12.5 EUR"), ("money", "12.9 EUR"))),
    ("de_DE", "Das Paket wiegt 3,5 kg.", (("quantity", "3.5 kg"),)),
    ("de_DE", "Das Paket wiegt 3500 g.", (("quantity", "3.5 kg"),)),
    ("de_DE", "Wir haben sonntags geschlossen.", (("day", "sunday"),)),
    ("de_DE", "Der Termin ist am 3. März um 14 Uhr.", (("date", "--03-03"), ("time", "14:00"))),
    ("de_DE", "Der Termin ist um 14.30 Uhr.", (("time", "14:30"),)),
    ("de_DE", "Es sind zweiundzwanzig Stück.", (("number", "22"),)),
    ("de_DE", "Der Preis ist 1.620 Euro.", (("money", "1620 EUR"),)),
    ("fr_FR", "Le total est de 1 620,00 € TTC.", (("money", "1620 EUR"),)),
    ("fr_FR", "Le total est de 1\u00a0620,00\u00a0€.", (("money", "1620 EUR"),)),
    ("fr_FR", "Rendez-vous le 3 mars 2026 à 14h30.", (("date", "2026-03-03"), ("time", "14:30"))),
    ("fr_FR", "Il reste vingt et un jours.", (("number", "21"),)),
    ("fr_FR", "Il en reste vingt-deux pour la commande.", (("number", "22"),)),
    ("fr_FR", "La boîte pèse 2,25 kg.", (("quantity", "2.25 kg"),)),
    ("fr_FR", "Fermé le dimanche.", (("day", "sunday"),)),
    ("it_IT", "Il prezzo è di ventuno euro per l'ordine.", (("number", "21"),)),
    ("it_IT", "Il totale è 1.234,56 € per l'ordine.", (("money", "1234.56 EUR"),)),
    ("it_IT", "Consegna il 25 dicembre 2026.", (("date", "2026-12-25"),)),
    ("it_IT", "Chiuso la domenica.", (("day", "sunday"),)),
    ("pt_BR", "O total é R$ 12,50 para o pedido.", (("money", "12.5 BRL"),)),
    ("pt_BR", "O total é R$ 1.620,00 para o pedido.", (("money", "1620 BRL"),)),
    ("pt_BR", "Entrega em 3 de março de 2026.", (("date", "2026-03-03"),)),
    ("pt_BR", "São vinte e um itens para o pedido.", (("number", "21"),)),
    ("pt_BR", "Fechado aos domingos.", (("day", "sunday"),)),
    ("en_US", "Open Sundays and Mondays.", (("day", "sunday"), ("day", "monday"))),
    ("en_US", "It costs $1,620.00 in total.", (("money", "1620 USD"),)),
    ("en_US", "It costs 1,620 USD in total.", (("money", "1620 USD"),)),
    ("en_US", "It weighs 3.5 kg.", (("quantity", "3.5 kg"),)),
    ("en_US", "It weighs 3.5 kilos.", (("quantity", "3.5 kg"),)),
    ("en_US", "It weighs 2 lbs.", (("quantity", "0.90718474 kg"),)),
    ("en_US", "It takes 3 hours.", (("quantity", "10800 s"),)),
    ("en_US", "It takes 180 minutes.", (("quantity", "10800 s"),)),
    ("en_US", "Twelve months of cover.", (("number", "12"),)),
    ("en_US", "It has 12 months of cover.", (("quantity", "12 month"),)),
    ("en_US", "It has 1 year of cover.", (("quantity", "12 month"),)),
    ("en_US", "There are twenty-one seats.", (("number", "21"),)),
    ("en_US", "There are three hundred and five seats.", (("number", "305"),)),
    ("en_US", "Meet at noon on Tue.", (("time", "12:00"), ("day", "tuesday"))),
    ("en_US", "Meet at 1 p.m. on Thurs.", (("time", "13:00"), ("day", "thursday"))),
    ("en_US", "The cat sat on the mat.", ()),
    ("en_US", "A 10% discount applies.", (("quantity", "0.1"),)),
    ("en_GB", "It costs £1,620.50 in total.", (("money", "1620.5 GBP"),)),
    ("en_GB", "Renews on 3rd of March.", (("date", "--03-03"),)),
    ("en_GB", "Priced at CHF 1'620.50 today.", (("money", "1620.5 CHF"),)),
    ("en_GB", "Between 1,000 and 2,000 points.", (("number", "1000"), ("number", "2000"))),
]
CASES = [*_babel_cases(), *HAND]


def test_given_the_table_when_counted_then_it_has_300_phrasings_in_six_locales() -> None:
    assert len(CASES) >= 300
    assert {loc for loc, _, _ in CASES} == set(LOCALES)


@pytest.mark.parametrize(("locale", "text", "want"), CASES,
                         ids=[f"{loc}-{i}" for i, (loc, _, _) in enumerate(CASES)])
def test_given_a_phrasing_when_read_then_its_facts_are_the_normal_forms(
    locale: str, text: str, want: tuple[tuple[str, str], ...],
) -> None:
    got = tuple((f.kind, f.value) for f in facts(text) if f.kind != "entity")
    assert got == want, (locale, text)
