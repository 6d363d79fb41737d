"""The run filters' small languages: ``--since 2h``, ``--score 'helpful<1'``, ``where=``.

A *since* is a day (``2026-01-31``), a moment (``2026-01-31T12:00``) or an
age (``90s``, ``30m``, ``2h``, ``7d``, ``2w``: that long before now); an
*until* the same (a day counts whole, a moment and an age count up to it). A
*score filter* is ``NAME OP VALUE`` (a name may hold spaces, never ``< > = !``:
:func:`score_name_problem` refuses such a score): ``OP`` one of ``< <= > >= = !=``, a
number compares the score's latest value, any other text (``=``/``!=``
only) its latest label. A *where* text is space-separated ``key=value``
terms over :data:`WHERE_KEYS` (``release=1.4 tag=beta score=helpful<1``),
the form ``footprint evaluate --where`` and the lens's filter command take.
"""

from __future__ import annotations

import datetime
import math
import re
import shlex
from dataclasses import dataclass
from typing import Literal

from footprint._errors import ConfigError, did_you_mean

__all__ = ["WHERE_KEYS", "ScoreFilter", "parse_score", "parse_since", "parse_until",
           "parse_where", "score_label_problem", "score_name_problem"]

Op = Literal["<", "<=", ">", ">=", "=", "!="]
_SCORE = re.compile(r"^\s*([^<>=!\s](?:[^<>=!]*[^<>=!\s])?)\s*(<=|>=|!=|==|<|>|=)\s*"
                    r"([^<>=!\s].*?)\s*$", re.S)
_OPS = ("<", "<=", ">", ">=", "=", "!=")
_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
WHERE_KEYS = ("user", "session", "tag", "release", "env", "status", "since", "until",
              "score", "model", "answer")
"""The keys a where text may use (``tag``, ``status`` and ``score`` may repeat)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoreFilter:
    """One parsed ``NAME OP VALUE``: ``value`` a number, or ``label`` a text."""

    name: str
    op: Op
    value: float | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        if self.value is not None and math.isnan(self.value):
            raise ConfigError(f"ScoreFilter(value={self.value!r}): nan is no number to compare "
                              "a score with; pass a number, e.g. value=0.5")
        if self.op not in _OPS or (self.value is None) == (self.label is None) or (
                self.label is not None and self.op not in ("=", "!=")):
            raise ConfigError(f"ScoreFilter(op={self.op!r}, value={self.value!r}, "
                              f"label={self.label!r}): give one of value or label, and for a "
                              "label op = or !=; or write it as text: parse_score('helpful<1')")

    def sql(self, name: str = "name", value: str = "value",
            label: str = "label") -> tuple[str, list[object]]:
        """The condition over a row with these name, value and label columns, and its
        parameters."""
        if self.value is not None:
            return f"{name} = ? AND {value} {self.op} ?", [self.name, self.value]
        return f"{name} = ? AND {label} {self.op} ?", [self.name, self.label]


def score_name_problem(name: str) -> str | None:
    """Why a score could not be named by a filter (``NAME OP VALUE``), or ``None``: a name
    holds none of ``< > = !``, no control character, and no space at either end."""
    if any(c in "<>=!" for c in name):
        return "holds one of < > = !"
    if not name.isprintable():
        return "holds a control character"
    if name != name.strip():
        return "starts or ends with a space"
    return None


def score_label_problem(label: str) -> str | None:
    """Why a label could not be matched by a filter (``NAME=LABEL``), or ``None``: a label
    is not empty, has no space at either end, no control character, and does not start
    with one of ``< > = !``."""
    if not label.strip():
        return "is empty"
    if label != label.strip():
        return "starts or ends with a space"
    if not label.isprintable():
        return "holds a control character"
    if label[0] in "<>=!":
        return "starts with one of < > = !"
    return None


def parse_score(text: str) -> ScoreFilter:
    """``helpful<1`` -> ``ScoreFilter(name='helpful', op='<', value=1.0)``."""
    if not isinstance(text, str):
        raise ConfigError(f"score filter {text!r}: pass text such as 'helpful<1'")
    found = _SCORE.match(text)
    if found is None:
        raise ConfigError(f"score filter {text!r} is not NAME OP VALUE; write e.g. 'helpful<1', "
                          "'helpful>=0.5' or 'verdict=wrong' (OP: < <= > >= = !=)")
    name, op, raw = found.groups()
    op = "=" if op == "==" else op
    try:
        number = float(raw)
    except ValueError:
        if op not in ("=", "!="):
            raise ConfigError(f"score filter {text!r}: {op} needs a number, not {raw!r}; "
                              f"compare a label with = or != (e.g. '{name}={raw}')") from None
        return ScoreFilter(name=name, op=op, label=raw)  # type: ignore[arg-type]
    if math.isnan(number):
        raise ConfigError(f"score filter {text!r}: nan is no number to compare a score with "
                          f"(every score would pass); write one, e.g. '{name}{op}0.5'")
    return ScoreFilter(name=name, op=op, value=number)  # type: ignore[arg-type]


def parse_since(value: object, *, now: datetime.datetime | None = None,
                name: str = "since") -> datetime.datetime | None:
    """A UTC moment from a day, a moment or an age (see the module docstring)."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day, tzinfo=datetime.UTC)
    if isinstance(value, str):
        text = value.strip()
        age = _AGE.match(text)
        if age is not None:
            now = now or datetime.datetime.now(datetime.UTC)
            return now - datetime.timedelta(seconds=float(age[1]) * _UNITS[age[2]])
        try:
            return parse_since(datetime.datetime.fromisoformat(text), name=name)
        except ValueError:
            pass
    raise ConfigError(f"{name}={value!r}: pass an age such as 90s, 30m, 2h, 7d or 2w, or a "
                      "date as YYYY-MM-DD (or YYYY-MM-DDTHH:MM)")


def parse_until(value: object, *, now: datetime.datetime | None = None
                ) -> datetime.datetime | None:
    """The first UTC moment *after* an ``until``: a day counts whole (``2026-01-31``: up to
    midnight that ends it), a moment or an age (as :func:`parse_since` reads them) up to and
    including that moment; runs started before it match."""
    if value is None:
        return None
    day = value if type(value) is datetime.date else None
    if isinstance(value, str):
        try:
            day = datetime.date.fromisoformat(value.strip())
        except ValueError:
            day = None
    if day is not None:
        return datetime.datetime(day.year, day.month, day.day,
                                 tzinfo=datetime.UTC) + datetime.timedelta(days=1)
    moment = parse_since(value, now=now, name="until")
    return None if moment is None else moment + datetime.timedelta(microseconds=1)


def parse_where(text: str) -> dict[str, list[str]]:
    """``"release=1.4 tag=a tag=b"`` -> ``{"release": ["1.4"], "tag": ["a", "b"]}``."""
    if not isinstance(text, str):
        raise ConfigError(f"where={text!r}: pass text such as 'release=1.4 score=helpful<1'")
    try:
        terms = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"where={text!r}: {exc}; close the quote") from None
    out: dict[str, list[str]] = {}
    for term in terms:
        key, sep, value = term.partition("=")
        if not sep or not value:
            raise ConfigError(f"where term {term!r} is not key=value; write e.g. "
                              "'release=1.4 tag=beta score=helpful<1'")
        if key not in WHERE_KEYS:
            raise ConfigError(f"where key {key!r} is unknown{did_you_mean(key, WHERE_KEYS)}; "
                              f"use one of {', '.join(WHERE_KEYS)}")
        out.setdefault(key, []).append(value)
    return out
