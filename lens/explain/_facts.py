"""Facts in an answer, apart from its wording: numbers, times, dates, money, units, entities.

An answer's *facts* are the values a user would check: ``13:00`` and ``1 pm``
are one time, ``810.00 EUR`` and ``€810`` one amount, ``1,000``, ``1000`` and
``one thousand`` one number, ``March 3`` and ``2026-03-03`` one date when
compared with each other (a year left out is no other year). Spans are
found by small patterns; each is then *parsed* by
Python's own parsers — :func:`datetime.datetime.strptime` for times and
dates, :class:`decimal.Decimal` for numbers and amounts, :mod:`calendar`'s
day and month names; English cardinals in words by a small grammar of their
own — so a span that does not parse stays plain wording.

* :func:`facts` — every fact of a text with its span and its normal form.
* :func:`canonical` — the text with each fact replaced by its normal form,
  then case, punctuation and spacing folded: two answers that differ only in
  how a fact is written have the same canonical text.
* :func:`fact_key` — the set of facts alone (wording ignored entirely).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Literal

__all__ = ["VALUE_KINDS", "Fact", "FactKind", "canonical", "fact_key", "facts", "number"]

FactKind = Literal["time", "date", "day", "money", "quantity", "number", "entity"]
VALUE_KINDS: frozenset[str] = frozenset({"time", "date", "day", "money", "quantity", "number"})

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY", "EUR": "EUR", "USD": "USD",
             "GBP": "GBP", "JPY": "JPY", "CHF": "CHF", "euro": "EUR", "euros": "EUR",
             "dollars": "USD", "pounds": "GBP"}

def _spellings(base: str, factor: int | str, *names: str) -> dict[str, tuple[str, Decimal]]:
    return dict.fromkeys(names, (base, Decimal(factor)))


_UNITS: dict[str, tuple[str, Decimal]] = {  # name -> (base unit, exact factor to it)
    **_spellings("g", 1000, "kg", "kgs", "kilogram", "kilograms", "kilo", "kilos"),
    **_spellings("g", 1, "g", "gram", "grams"),
    **_spellings("g", "0.001", "mg", "milligram", "milligrams"),
    **_spellings("m", 1000, "km", "kilometre", "kilometres", "kilometer", "kilometers"),
    **_spellings("m", 1, "m", "metre", "metres", "meter", "meters"),
    **_spellings("m", "0.01", "cm", "centimetre", "centimetres", "centimeter", "centimeters"),
    **_spellings("m", "0.001", "mm", "millimetre", "millimetres", "millimeter", "millimeters"),
    **_spellings("l", 1, "l", "litre", "litres", "liter", "liters"),
    **_spellings("l", "0.001", "ml", "millilitre", "millilitres", "milliliter", "milliliters"),
    **_spellings("%", 1, "%", "percent", "per cent"),
    **_spellings("s", 1, "sec", "secs", "second", "seconds"),  # durations in seconds
    **_spellings("s", 60, "min", "mins", "minute", "minutes"),
    **_spellings("s", 3600, "h", "hr", "hrs", "hour", "hours"),
    **_spellings("s", 86400, "day", "days"),
    **_spellings("s", 604800, "week", "weeks"),
    **_spellings("months", 1, "month", "months"),  # a month has no fixed length in days
    **_spellings("months", 12, "year", "years"),
    **_spellings("units", 1, "unit", "units")}
"""Exact factors only: 180 minutes and 3 hours are one duration, to the last digit."""
_UNIT_NAMES = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True)
                       if u != "%")
_MONTHS = "|".join(m for m in (*calendar.month_name[1:], *calendar.month_abbr[1:]))
_DAYS = "|".join(calendar.day_name)
_DAY_ABBR = "|".join((*calendar.day_abbr, "Tues", "Thur", "Thurs"))
_TH = "(?:st|nd|rd|th)?"
_SMALL = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
          "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = {"thousand": 1000, "million": 1_000_000}
_WORD_VALUE = {w: i for i, w in enumerate(_SMALL)} | {w: 10 * i for i, w in enumerate(_TENS, 2)}
_NWORD = "|".join(sorted((*_WORD_VALUE, "hundred", *_SCALES), key=len, reverse=True))

_PATTERNS: tuple[tuple[FactKind, re.Pattern[str]], ...] = (
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("date", re.compile(rf"\b(?:\d{{1,2}}{_TH} (?:of )?(?:{_MONTHS})\.?|(?:{_MONTHS})\.? "
                        rf"\d{{1,2}}{_TH})(?:,? \d{{4}})?\b")),
    ("time", re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:[ap]\.m\.|[ap]m\b)", re.IGNORECASE)),
    ("time", re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b")),
    ("time", re.compile(r"\b(?:noon|midday|midnight)\b", re.IGNORECASE)),
    ("day", re.compile(rf"\b(?:{_DAYS})\b", re.IGNORECASE)),
    ("day", re.compile(rf"\b(?:{_DAY_ABBR})\b\.?")),  # capitalised only: "sat", "wed"
    ("money", re.compile(rf"[€$£¥]\s?(?:{_NUM})|\b(?:{_NUM})\s?(?:[€$£¥]|"
                         r"(?:EUR|USD|GBP|JPY|CHF|euros?|dollars|pounds)\b)", re.IGNORECASE)),
    ("money", re.compile(rf"\b(?:EUR|USD|GBP|JPY|CHF)\s?(?:{_NUM})\b", re.IGNORECASE)),
    ("quantity", re.compile(rf"\b(?:{_NUM})\s?(?:%|(?:{_UNIT_NAMES})\b)", re.IGNORECASE)),
    ("entity", re.compile(r"\b(?:[A-Z][\w-]*[A-Z0-9][\w-]*|[A-Z]{2,}|[A-Za-z]+-\d[\w-]*|"
                          r"[a-z]+_[a-z_]+)\b")),
    ("number", re.compile(rf"\b(?:{_NWORD})(?:(?:-|\s+|\s+and\s+)(?:{_NWORD}))*\b",
                          re.IGNORECASE)),
    ("number", re.compile(rf"(?<![\w.]){_NUM}(?![\w])")),
)


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


def number(text: str) -> Decimal | None:
    """``1,000.50`` → ``Decimal('1000.5')``; ``None`` when it is not a number."""
    try:
        return Decimal(text.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _num_text(text: str) -> str:
    got = number(text)
    return text if got is None else f"{got:f}"


def _word_step(total: int, group: int, word: str) -> tuple[int, int] | None:
    """One number word added to ``(total, group)``; ``None`` when it cannot follow."""
    if word in _SCALES:
        return (total + group * _SCALES[word], 0) if group else None
    if word == "hundred":
        return (total, group * 100) if 0 < group < 100 else None
    value, tens = _WORD_VALUE[word], group % 100
    # ``twenty`` and ``eleven`` start the tens; ``five`` starts them or ends ``twenty``
    fits = tens == 0 if value >= 10 else tens == 0 or (tens >= 20 and tens % 10 == 0)
    return (total, group + value) if fits else None


def _words(text: str) -> str | None:
    """``twenty-one`` → ``21``, ``three hundred and five`` → ``305``; ``None`` for words that
    do not make one number (``one two``). English cardinals; ``zero`` only alone."""
    words = [w for w in re.split(r"[\s-]+", text.lower()) if w != "and"]
    if words == ["zero"]:
        return "0"
    total, group = 0, 0
    for word in words:
        step = None if word == "zero" else _word_step(total, group, word)
        if step is None:
            return None
        total, group = step
    return str(total + group)


def _time(text: str) -> str | None:
    t = re.sub(r"\s+|\.", "", text.lower())
    named = {"noon": "12:00", "midday": "12:00", "midnight": "00:00"}
    if t in named:
        return named[t]
    for fmt in ("%I:%M%p", "%I%p", "%H:%M"):
        try:
            return datetime.strptime(t.upper(), fmt).strftime("%H:%M")
        except ValueError:
            continue
    return None


def _date(text: str) -> str | None:
    """``2026-03-03``; a date written without its year (``March 3rd``) is ``--03-03``
    (ISO 8601's month and day), parsed in a leap year so that 29 February reads."""
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
    return None


def _money(text: str) -> str | None:
    amount = re.search(_NUM, text)
    sign = "".join((text[:amount.start()] + text[amount.end():]).split()) if amount else ""
    cur = _CURRENCY.get(sign) or _CURRENCY.get(sign.upper()) or _CURRENCY.get(sign.lower())
    if amount is None or cur is None:
        return None
    return f"{_num_text(amount.group(0))} {cur}"


def _quantity(text: str) -> str | None:
    amount = re.match(_NUM, text)
    if amount is None:
        return None
    unit = " ".join(text[amount.end():].lower().split())
    base, factor = _UNITS.get(unit, (unit, Decimal(1)))
    value = number(amount.group(0))
    return None if value is None else f"{(value * factor).normalize():f} {base}"


def _parse(kind: FactKind, surface: str) -> str | None:
    if kind == "time":
        return _time(surface)
    if kind == "date":
        return _date(surface)
    if kind == "money":
        return _money(surface)
    if kind == "quantity":
        return _quantity(surface)
    if kind == "number":
        return _num_text(surface) if surface[0].isdigit() else _words(surface)
    return _day(surface) if kind == "day" else surface


def _day(text: str) -> str:
    """``Tue``, ``Tues.`` and ``TUESDAY`` → ``tuesday``."""
    head = text.rstrip(".").lower()[:3]
    return next(d.lower() for d in calendar.day_name if d.lower().startswith(head))


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


def _facts(text: str) -> tuple[Fact, ...]:
    taken: list[tuple[int, int]] = []
    found: list[Fact] = []
    for kind, rx in _PATTERNS:
        for m in rx.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            value = _parse(kind, m.group(0))
            if value is None:
                continue
            taken.append((m.start(), m.end()))
            found.append(Fact(kind, m.start(), m.end(), m.group(0), value))
    return tuple(sorted(found, key=lambda f: f.start))


_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)


def _fold(text: str) -> str:
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def _bare(f: Fact) -> Fact:
    """An amount or quantity as the number it is written with (``€920`` → ``920``)."""
    if f.kind not in ("money", "quantity"):
        return f
    amount = re.search(_NUM, f.surface)
    return f if amount is None else replace(f, kind="number", value=_num_text(amount.group(0)))


def canonical(text: str, like: str | None = None, *, bare: bool = False) -> str:
    """The text with every fact in its normal form; case, punctuation and spacing folded
    (``like``: the answer it is compared with, see :func:`facts`; ``bare``: amounts and
    quantities as their numbers, for a wanted answer given as a bare number)."""
    out: list[str] = []
    at = 0
    for f in facts(text, like):
        f = _bare(f) if bare else f
        word = f.kind == "entity" and f.surface.isalpha()  # APPROVED = Approved: case only
        out += [_fold(text[at:f.start]), _fold(f.surface) if word else f"⟨{f.token.lower()}⟩"]
        at = f.end
    out.append(_fold(text[at:]))
    return " ".join(part for part in out if part)


def fact_key(text: str, like: str | None = None) -> str:
    """The text's facts alone, as a sorted set (wording and order ignored; ``like``: the
    answer it is compared with, see :func:`facts`)."""
    return "; ".join(sorted({f.token.lower() for f in facts(text, like)}))
