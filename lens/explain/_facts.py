"""Facts in an answer, apart from its wording: numbers, times, dates, money, units, entities.

An answer's *facts* are the values a user would check: ``13:00`` and ``1 pm``
are one time, ``810,00 €``, ``€810`` and ``810.00 EUR`` one amount, ``1,000``,
``1000`` and ``one thousand`` one number, ``3 hours`` and ``180 minutes`` one
duration, ``Sundays`` and ``sonntags`` one weekday, ``March 3`` and
``2026-03-03`` one date when compared with each other (a year left out is no
other year). Spans are found by patterns here; each is then *read* by the
maintained parser of its kind (``lens.explain._readings``: Babel for numbers
in each locale's separators, currencies and the weekday and month names of
en, de, fr, it, pt and es; pint for units; dateparser for dates in words;
text2num for numbers in words; :func:`datetime.datetime.strptime` for times
and English dates), so a span no parser reads stays plain wording.

* :func:`facts` — every fact of a text with its span and its normal form.
* :func:`canonical` — the text with each fact replaced by its normal form,
  then case, punctuation and spacing folded: two answers that differ only in
  how a fact is written have the same canonical text.
* :func:`fact_key` — the set of facts alone (wording ignored entirely).
"""

from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from lens.explain._readings import (
    Style,
    currency_code,
    day_name,
    decimal_style,
    localized_date,
    month_pattern,
    number_words,
    read_number,
    read_quantity,
    weekday_pattern,
)

__all__ = ["VALUE_KINDS", "Fact", "FactKind", "canonical", "fact_key", "facts", "number"]

FactKind = Literal["time", "date", "day", "money", "quantity", "number", "entity"]
VALUE_KINDS: frozenset[str] = frozenset({"time", "date", "day", "money", "quantity", "number"})


_NUM = (r"\d{1,3}(?:[.,'’\u00a0\u202f ]\d{3})+(?:[.,]\d+)?(?![.,]?\d)"
        r"|\d+(?:[.,]\d+)?(?![.,]\d)")
"""A number as any of the locales writes it: groups of three after a dot, comma, apostrophe
or space, then decimals after a dot or comma (which is which: ``_readings.read_number``)."""
_CURRENCY_MARK = (r"R\$|US\$|\$US|[€$£¥]|\b(?:EUR|USD|GBP|JPY|CHF|BRL|CAD|AUD|SEK|NOK|DKK|PLN|"
                  r"euros?|dollars?|pounds?|reais|francs?|yen)\b")
_UNIT_WORDS = (
    "kg", "kgs", "kilogram", "kilograms", "kilo", "kilos", "g", "gram", "grams", "mg",
    "milligram", "milligrams", "lb", "lbs", "pound", "oz", "ounce", "ounces", "t", "tonne",
    "tonnes", "km", "kilometre", "kilometres", "kilometer", "kilometers", "m", "metre",
    "metres", "meter", "meters", "cm", "centimetre", "centimetres", "centimeter",
    "centimeters", "mm", "millimetre", "millimetres", "millimeter", "millimeters", "mi",
    "mile", "miles", "ft", "feet", "foot", "l", "litre", "litres", "liter", "liters", "ml",
    "millilitre", "millilitres", "milliliter", "milliliters", "percent", "per cent", "sec",
    "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour",
    "hours", "day", "days", "week", "weeks", "month", "months", "year", "years", "unit",
    "units", "kWh", "W", "kW", "°C", "°F", "m²", "sq m", "GB", "MB", "TB")
"""Unit spellings a quantity span may end with (read by pint, ``_readings.read_quantity``)."""
_UNIT_NAMES = "|".join(re.escape(u) for u in sorted(_UNIT_WORDS, key=len, reverse=True))
_MONTHS = "|".join(m for m in (*calendar.month_name[1:], *calendar.month_abbr[1:]))
_TH = "(?:st|nd|rd|th)?"


def _patterns() -> tuple[tuple[FactKind, re.Pattern[str]], ...]:
    """The span patterns, in claim order (an earlier kind's span is not read again);
    weekday and month names of every locale come from Babel (``_readings``)."""
    days, months = weekday_pattern(), month_pattern()
    return (
        ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
        ("date", re.compile(rf"\b(?:\d{{1,2}}{_TH} (?:of )?(?:{_MONTHS})\.?|(?:{_MONTHS})\.? "
                            rf"\d{{1,2}}{_TH})(?:,? \d{{4}})?\b")),
        ("date", re.compile(rf"\b\d{{1,2}}\.?\s(?:de\s)?(?:{months})\.?"
                            r"(?:,?\s(?:de\s)?\d{4})?(?!\w)", re.IGNORECASE)),
        ("time", re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:[ap]\.m\.|[ap]m\b)", re.IGNORECASE)),
        ("time", re.compile(r"\b(?:[01]?\d|2[0-3])[:.][0-5]\d\s?Uhr\b|\b(?:[01]?\d|2[0-3])"
                            r"\s?Uhr\b|\b(?:[01]?\d|2[0-3])h[0-5]\d\b")),
        ("time", re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b")),
        ("time", re.compile(r"\b(?:noon|midday|midnight)\b", re.IGNORECASE)),
        ("day", re.compile(rf"\b(?:{days})s?\b\.?", re.IGNORECASE)),
        ("money", re.compile(rf"(?:{_CURRENCY_MARK})[\s\u00a0\u202f]?(?:{_NUM})|(?<![\w.,])"
                             rf"(?:{_NUM})[\s\u00a0\u202f]?(?:{_CURRENCY_MARK})", re.IGNORECASE)),
        ("quantity", re.compile(rf"(?<![\w.,])(?:{_NUM})[\s\u00a0\u202f]?"
                                rf"(?:%|(?:{_UNIT_NAMES})\b)", re.IGNORECASE)),
        ("entity", re.compile(r"\b(?:[A-Z][\w-]*[A-Z0-9][\w-]*|[A-Z]{2,}|[A-Za-z]+-\d[\w-]*|"
                              r"[a-z]+_[a-z_]+)\b")),
        ("number", re.compile(rf"(?<![\w.,]){_NUM}(?![\w])")),
    )


_SHORT_DAYS = re.compile(r"^(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)s?\.?$")
"""English day abbreviations, which are words too (``sat``, ``wed``): capitalised only."""


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a text: its kind, where it is, how it was written and its normal form."""

    kind: FactKind
    start: int
    end: int
    surface: str
    value: str

    @property
    def token(self) -> str:
        return f"{self.kind}:{self.value}"


def number(text: str, style: Style = "dot") -> Decimal | None:
    """``1,000.50`` → ``Decimal('1000.5')``, ``1.620,00`` → ``1620``; ``None`` when it is not
    a number (``style``: how the text writes decimals, see ``_readings.decimal_style``)."""
    return read_number(text, style)


def _num_text(text: str, style: Style = "dot") -> str:
    got = number(text, style)
    return text if got is None else f"{got:f}"


def _time(text: str) -> str | None:
    t = re.sub(r"\s+|(?<=[a-z])\.", "", text.lower()).replace("uhr", "")
    named = {"noon": "12:00", "midday": "12:00", "midnight": "00:00"}
    if t in named:
        return named[t]
    t = re.sub(r"^(\d{1,2})[h.](\d{2})$", r"\1:\2", t)
    for fmt in ("%I:%M%p", "%I%p", "%H:%M", "%H"):
        try:
            return datetime.strptime(t.upper(), fmt).strftime("%H:%M")
        except ValueError:
            continue
    return None


def _date(text: str) -> str | None:
    """``2026-03-03``; a date written without its year (``March 3rd``) is ``--03-03``
    (ISO 8601's month and day), parsed in a leap year so that 29 February reads; dates in
    another language's words by ``_readings.localized_date``."""
    t = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b|[.,]|\bof ", "", text)
    try:
        return date.fromisoformat(t).isoformat()
    except ValueError:
        pass
    yearless = re.search(r"\d{4}$", t) is None
    for fmt in ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y"):
        try:
            got = datetime.strptime(f"{t} 2000" if yearless else t, fmt).date()
        except ValueError:
            continue
        return f"--{got:%m-%d}" if yearless else got.isoformat()
    return localized_date(text)


def _amount(text: str) -> re.Match[str] | None:
    return re.search(_NUM, text)


def _money(text: str, style: Style) -> str | None:
    amount = _amount(text)
    if amount is None:
        return None
    cur = currency_code(text[:amount.start()] + text[amount.end():])
    value = number(amount.group(0), style)
    return None if cur is None or value is None else f"{value:f} {cur}"


def _quantity(text: str, style: Style) -> str | None:
    amount = re.match(_NUM, text)
    value = None if amount is None else number(amount.group(0), style)
    if amount is None or value is None:
        return None
    return read_quantity(value, text[amount.end():])


def _day(text: str) -> str | None:
    """``Tue``, ``Tues.``, ``Sundays``, ``TUESDAY``, ``sonntags`` → the English day."""
    if _SHORT_DAYS.match(text) and text.islower():
        return None  # "sat", "wed": words before they are days
    return day_name(text)


def _parse(kind: FactKind, surface: str, style: Style) -> str | None:
    if kind == "time":
        return _time(surface)
    if kind == "date":
        return _date(surface)
    if kind == "money":
        return _money(surface, style)
    if kind == "quantity":
        return _quantity(surface, style)
    if kind == "number":
        return _num_text(surface, style) if number(surface, style) is not None else None
    return _day(surface) if kind == "day" else surface


def facts(text: str, like: str | None = None) -> tuple[Fact, ...]:
    """Every fact of ``text``, in order; a span claimed by an earlier kind is not re-read.

    With ``like`` (the answer ``text`` is compared with), a date of ``text`` written with
    or without its year where ``like`` has the same month and day the other way takes
    ``like``'s normal form: ``March 3`` and ``2026-03-03`` are one date (a year left out
    is no other year); ``2025-03-03`` and ``2026-03-03`` stay two."""
    found = _facts(text)
    if like is None:
        return found
    ref = {f.value[-5:]: f.value for f in _facts(like) if f.kind == "date"}
    return tuple(replace(f, value=ref[f.value[-5:]])
                 if f.kind == "date" and f.value[-5:] in ref
                 and f.value.startswith("--") != ref[f.value[-5:]].startswith("--") else f
                 for f in found)


@functools.cache
def _compiled() -> tuple[tuple[FactKind, re.Pattern[str]], ...]:
    return _patterns()


def _facts(text: str) -> tuple[Fact, ...]:
    style = decimal_style(text)
    taken: list[tuple[int, int]] = []
    found: list[Fact] = []
    for kind, rx in _compiled():
        if kind == "number":  # numbers in words first: "twenty-one" is one number
            for start, end, digits in number_words(text):
                if not any(start < e and s < end for s, e in taken):
                    taken.append((start, end))
                    found.append(Fact("number", start, end, text[start:end], digits))
        for m in rx.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            value = _parse(kind, m.group(0), style)
            if value is None:
                continue
            taken.append((m.start(), m.end()))
            found.append(Fact(kind, m.start(), m.end(), m.group(0), value))
    return tuple(sorted(found, key=lambda f: f.start))


_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)


def _fold(text: str) -> str:
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def _bare(f: Fact, style: Style) -> Fact:
    """An amount or quantity as the number it is written with (``€920`` → ``920``)."""
    if f.kind not in ("money", "quantity"):
        return f
    amount = _amount(f.surface)
    return f if amount is None else replace(f, kind="number",
                                            value=_num_text(amount.group(0), style))


def canonical(text: str, like: str | None = None, *, bare: bool = False) -> str:
    """The text with every fact in its normal form; case, punctuation and spacing folded
    (``like``: the answer it is compared with, see :func:`facts`; ``bare``: amounts and
    quantities as their numbers, for a wanted answer given as a bare number)."""
    out: list[str] = []
    at = 0
    style = decimal_style(text)
    for f in facts(text, like):
        f = _bare(f, style) if bare else f
        word = f.kind == "entity" and f.surface.isalpha()  # APPROVED = Approved: case only
        out += [_fold(text[at:f.start]), _fold(f.surface) if word else f"⟨{f.token.lower()}⟩"]
        at = f.end
    out.append(_fold(text[at:]))
    return " ".join(part for part in out if part)


def fact_key(text: str, like: str | None = None) -> str:
    """The text's facts alone, as a sorted set (wording and order ignored; ``like``: the
    answer it is compared with, see :func:`facts`)."""
    return "; ".join(sorted({f.token.lower() for f in facts(text, like)}))
