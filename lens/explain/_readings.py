"""Reading one fact in any of the common locales, by maintained parsers.

:mod:`lens.explain._facts` finds the spans; this module decides which
reading of a span applies and hands it to the parser that owns that kind:

* numbers and amounts — Babel's locale rules (:func:`babel.numbers.parse_decimal`,
  strict: a grouping that breaks the locale's rules is no number), for the
  locale whose separators the span uses: ``1.620,00`` (de-DE, it-IT, pt-BR),
  ``1 620,00`` with any space (fr-FR), ``1'620.00`` (de-CH), ``1,620.00``
  (en-US, en-GB). One separator followed by three digits (``1.620``,
  ``1,620``) is read as the text's own style says (:func:`decimal_style`);
* currencies — the ISO 4217 codes Babel knows, and the common symbols and words;
* quantities and units — pint (exact, in :class:`~decimal.Decimal`), to base units;
* dates in words — dateparser, in the languages whose month names Babel lists;
* number words — text2num (English, German, French, Italian, Portuguese, Spanish);
* weekdays — Babel's day names of each locale, singular, plural or abbreviated.

A span no parser reads stays wording.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

__all__ = ["LOCALES", "Style", "currency_code", "day_name", "decimal_style", "localized_date",
           "month_pattern", "number_words", "read_number", "read_quantity", "weekday_pattern"]

Style = Literal["dot", "comma"]
LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "pt_BR", "es_ES")
"""The locales whose numbers, months and weekdays are read."""
_WORD_LANGS = {"en": "en", "de": "de", "fr": "fr", "it": "it", "pt": "pt", "es": "es"}
_SPACES = re.compile(r"[\s\u00a0\u202f]")
_COMMA_DECIMAL = re.compile(r"\d,\d{1,2}(?![\d])|\d\.\d{3},\d|\d[\s\u00a0\u202f]\d{3},\d")
_DOT_DECIMAL = re.compile(r"\d\.\d{1,2}(?![\d])|\d,\d{3}\.\d")


def decimal_style(text: str) -> Style:
    """Whether ``text`` writes decimals with a comma (``810,00 €``, ``1.620,00``) or a dot:
    by the numbers only one style can read, else by its language (English writes a dot,
    German, French, Italian, Portuguese and Spanish a comma); a dot when nothing tells."""
    comma, dot = len(_COMMA_DECIMAL.findall(text)), len(_DOT_DECIMAL.findall(text))
    if comma != dot:
        return "comma" if comma > dot else "dot"
    return "dot" if language(text) == "en" else "comma"


def _locale_of(span: str, style: Style) -> tuple[str, str]:
    """The span as Babel should read it, and the locale whose separators it uses."""
    if _SPACES.search(span):
        return _SPACES.sub("\u202f", span), "fr_FR"
    if "'" in span or "’" in span:
        return span.replace("’", "'"), "de_CH"
    dots, commas = span.count("."), span.count(",")
    if dots and commas:
        return span, "en_US" if span.rfind(".") > span.rfind(",") else "de_DE"
    if not (dots or commas):
        return span, "en_US"
    sep = "." if dots else ","
    digits_after = len(span) - span.rfind(sep) - 1
    if span.count(sep) > 1 or digits_after == 3:  # a grouping, unless the text reads commas
        grouping = span.count(sep) > 1 or (sep == ",") == (style == "dot")
        comma_decimal = (sep == ".") if grouping else (sep == ",")
        return span, "de_DE" if comma_decimal else "en_US"
    return span, "de_DE" if sep == "," else "en_US"


def read_number(span: str, style: Style = "dot") -> Decimal | None:
    """``1.620,00`` → ``1620``, ``3,5`` → ``3.5``, ``1,000`` → ``1000`` (with ``style``
    ``'comma'``: ``1``); ``None`` when no locale's rules read it."""
    from babel.numbers import NumberFormatError, parse_decimal

    text, locale = _locale_of(span.strip(), style)
    try:
        return Decimal(parse_decimal(text, locale=locale, strict=True)).normalize()
    except (NumberFormatError, InvalidOperation, ValueError):
        return None


_SYMBOLS = {"€": "EUR", "$": "USD", "US$": "USD", "$US": "USD", "£": "GBP", "¥": "JPY", "R$": "BRL",
            "Fr.": "CHF", "euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD",
            "pound": "GBP", "pounds": "GBP", "real": "BRL", "reais": "BRL", "franc": "CHF",
            "francs": "CHF", "yen": "JPY"}
"""Symbols and words the ISO list does not hold, each for the currency it most often means."""


@functools.cache
def _iso_codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


def currency_code(marker: str) -> str | None:
    """``€`` → ``EUR``, ``chf`` → ``CHF``, ``reais`` → ``BRL``; ``None`` for no currency."""
    text = "".join(marker.split())
    if text.upper() in _iso_codes():
        return text.upper()
    return _SYMBOLS.get(text) or _SYMBOLS.get(text.lower())


_CALENDAR_UNITS = {"month": ("month", 1), "months": ("month", 1), "year": ("month", 12),
                   "years": ("month", 12), "unit": ("unit", 1), "units": ("unit", 1)}
"""Units pint has no exact (or no right) reading of: a month has no fixed length, and pint
reads ``units`` as nits."""
_ALIASES = {"kilo": "kilogram", "kilos": "kilogram", "kgs": "kilogram", "lbs": "pound",
            "hrs": "hour", "mins": "minute", "secs": "second", "per cent": "percent",
            "°c": "degC", "°f": "degF", "sq m": "meter ** 2", "m²": "meter ** 2"}
"""Spellings pint reads as something else (``kilos`` is kilo-seconds to it) or not at all."""


@functools.cache
def _units() -> Any:
    import pint

    return pint.UnitRegistry(non_int_type=Decimal, cache_folder=":auto:")


def read_quantity(amount: Decimal, unit: str) -> str | None:
    """``3.5`` ``kg`` → ``3.5 kg``, ``3500`` ``g`` → ``3.5 kg``: in base units, exactly
    (``3 hours`` and ``180 min`` are one duration); ``None`` when pint knows no such unit."""
    name = " ".join(unit.lower().split())
    if name in _CALENDAR_UNITS:
        base, factor = _CALENDAR_UNITS[name]
        return f"{(amount * factor).normalize():f} {base}"
    try:
        q = _units().Quantity(amount, _ALIASES.get(name, name)).to_base_units()
    except Exception:  # pint raises its own many kinds for a name it cannot read
        return None
    magnitude = Decimal(q.magnitude).normalize()
    return f"{magnitude:f} {q.units:~}".strip()


@functools.cache
def _day_names() -> dict[str, int]:
    """Every locale's weekday name (lower case) → 0 (Monday)..6: the full names of every
    locale, abbreviations of English only (``Tue``; another language's ``di``, ``do``,
    ``mar`` are common words of its neighbours)."""
    from babel.dates import get_day_names

    names: dict[str, int] = {}
    for locale in LOCALES:
        widths: tuple[Literal["wide", "abbreviated"], ...] = (
            ("wide", "abbreviated") if locale.startswith("en") else ("wide",))
        for width in widths:
            for index, name in get_day_names(width, locale=locale).items():
                names.setdefault(name.lower().rstrip("."), index)
    for extra, index in (("tues", 1), ("thur", 3), ("thurs", 3)):
        names[extra] = index
    return names


def weekday_pattern() -> str:
    """A regex alternation of every weekday name, longest first (each may take a plural
    ``s``, or German's adverbial ``s``: ``Sundays``, ``sonntags``)."""
    return "|".join(re.escape(n) for n in sorted(_day_names(), key=len, reverse=True))


def day_name(span: str) -> str | None:
    """``Sundays``, ``Tue.``, ``sonntags``, ``dimanche`` → ``sunday`` / ``tuesday``."""
    import calendar

    word = span.lower().rstrip(".")
    names = _day_names()
    index = names.get(word, names.get(word[:-1]) if word.endswith("s") else None)
    return None if index is None else calendar.day_name[index].lower()


@functools.cache
def _months() -> dict[str, str]:
    """Month names of the non-English locales (wide and abbreviated) → their language."""
    from babel.dates import get_month_names

    months: dict[str, str] = {}
    for locale in LOCALES[2:]:
        for width in ("wide", "abbreviated"):
            for name in get_month_names(width, locale=locale).values():
                months.setdefault(name.lower().rstrip("."), locale[:2])
    return months


def month_pattern() -> str:
    """A regex alternation of the month names :func:`localized_date` reads."""
    return "|".join(re.escape(n) for n in sorted(_months(), key=len, reverse=True))


def localized_date(span: str) -> str | None:
    """``3. März 2026`` → ``2026-03-03``, ``3 de março`` → ``--03-03`` (no year given:
    ISO 8601's month and day); ``None`` when dateparser reads no day and month."""
    import dateparser

    month = next((m for m in re.findall(r"[^\W\d_]+", span.lower()) if m in _months()), None)
    if month is None:
        return None
    yearless = re.search(r"\d{4}", span) is None
    got = dateparser.parse(span, languages=[_months()[month]], settings={
        "REQUIRE_PARTS": ["day", "month"], "RELATIVE_BASE": datetime(2000, 1, 1),
        "PREFER_DAY_OF_MONTH": "first"})
    if got is None:
        return None
    day: date = got.date()
    return f"--{day:%m-%d}" if yearless else day.isoformat()


_STOPWORDS = {
    "en": {"the", "and", "is", "at", "of", "to", "it", "on", "for", "you", "with"},
    "de": {"der", "die", "das", "und", "ist", "um", "mit", "für", "nicht", "ein", "eine"},
    "fr": {"le", "la", "les", "et", "est", "à", "de", "pour", "une", "des", "avec"},
    "it": {"il", "lo", "la", "e", "è", "di", "per", "una", "con", "alle", "non"},
    "pt": {"o", "os", "as", "e", "é", "de", "para", "uma", "com", "às", "não"},
    "es": {"el", "los", "las", "y", "es", "de", "para", "una", "con", "no"},
}


def language(text: str) -> str:
    """The language of ``text`` for its number words, by its commonest words (English when
    nothing tells)."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    counts = {lang: sum(w in stop for w in words) for lang, stop in _STOPWORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] > counts["en"] else "en"


class _Token:
    __slots__ = ("start", "word")

    def __init__(self, start: int, word: str) -> None:
        self.start, self.word = start, word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: object) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


def number_words(text: str) -> list[tuple[int, int, str]]:
    """The numbers written in words in ``text`` (its language by :func:`language`):
    ``(start, end, value)``, e.g. ``twenty-one`` → ``21``, ``zweiundzwanzig`` → ``22``."""
    from text_to_num import find_numbers

    tokens = [_Token(m.start(), m.group(0)) for m in re.finditer(r"\w+|[^\w\s]", text)]
    if not tokens or not any(t.word.isalpha() for t in tokens):
        return []
    told, sure = language(text), _evidence(text) >= 2
    for lang in (told,) if sure else (told, *(k for k in _WORD_LANGS if k != told)):
        found = _occurrences(find_numbers(tokens, lang, 0.0), tokens, text)
        if found:
            return found
    return []


def _evidence(text: str) -> int:
    """How many common words of the language :func:`language` guessed ``text`` has (two
    or more: the guess is trusted; fewer: numbers in words are looked for in every
    language, the guessed one first)."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    return sum(w in _STOPWORDS[language(text)] for w in words)


def _occurrences(occurrences: list[Any], tokens: list[_Token], text: str,
                 ) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    glued: set[int] = set()  # numbers only a space apart ("one two") make no number: wording
    for occ in occurrences:
        first, last = tokens[occ.start], tokens[occ.end - 1]
        surface = text[first.start:last.start + len(last.word)]
        if occ.is_ordinal or not any(c.isalpha() for c in surface):
            continue
        value = Decimal(str(occ.value)).normalize()
        start, end = first.start, last.start + len(last.word)
        if found and not text[found[-1][1]:start].strip():
            glued.update((len(found) - 1, len(found)))
        found.append((start, end, f"{value:f}"))
    return [f for i, f in enumerate(found) if i not in glued]
