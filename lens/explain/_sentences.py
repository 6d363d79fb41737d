"""A piece of context cut into its sentences and lines, and the piece without some of them.

The cut is pysbd's (a maintained rule-based segmenter: it keeps "Dr. Smith pays
3.50 EUR." and "z. B." whole) inside each line of the text, so a table or a list
is cut at its lines and prose at its sentences. Each unit keeps its character
offsets in the piece's text.

:class:`TextEdit` is how a trial sends the piece without some units: every
request the trial makes has the piece's recorded text replaced by the shortened
text (a request-level edit, the same for a re-run and a re-send).
:class:`EditedProvider` applies it to whatever provider serves the trial.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from footprint._errors import ConfigError
from footprint.providers import LLMRequest, LLMResponse, Provider

__all__ = ["EditedProvider", "TextEdit", "Unit", "segment", "without_units"]

_CLOSEST = {"pt": "es"}
"""Languages pysbd has no rules of, cut by a close one's."""

_TITLES = frozenset({
    "dr", "dra", "prof", "mr", "mrs", "ms", "st", "m", "mme", "mlle", "me", "sig", "sigra",
    "dott", "sr", "sra", "srta", "hr", "fr", "nr", "no", "ca", "env", "aprox", "approx",
    "ggf", "bzw", "vgl", "p", "ex", "cf", "art", "abs", "s", "pág", "pag"})
"""Words that end in a full stop without ending a sentence, which pysbd's rules for some
languages miss (``Il Sig. Rossi``, ``p. ex. en ligne``): a cut after one is undone."""
@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    """One sentence (or a line holding none) of a piece: ``text[start:end]``."""

    index: int
    """1-based, in reading order."""
    line: int
    """The 1-based line of the piece it sits on."""
    start: int
    end: int
    text: str
    alone: bool
    """The only unit of its line (a table row, a list item): named as the line."""

    def where(self, lines: int) -> str:
        """``line 23`` (alone on a line of a text of several), else ``sentence 4``."""
        if lines > 1 and self.alone:
            return f"line {self.line}"
        return f"sentence {self.index}" + (f" (line {self.line})" if lines > 1 else "")


@cache
def _segmenter(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language=language, clean=False, char_span=True)


def _language(text: str) -> str:
    """The segmenter's language for ``text``: Japanese or Chinese by their scripts, else
    English rules unless its common words say German, French, Italian, Spanish or
    Portuguese (the abbreviations differ)."""
    if re.search(r"[\u3040-\u30ff]", text):
        return "ja"
    if re.search(r"[\u4e00-\u9fff]", text):
        return "zh"
    words = re.findall(r"[^\W\d_]+", text.lower())
    marks = {"de": {"der", "die", "das", "und", "ist", "nicht", "mit", "für"},
             "fr": {"le", "la", "les", "et", "est", "pas", "pour", "des"},
             "it": {"il", "di", "che", "non", "per", "sono", "gli", "della", "al", "del"},
             "es": {"el", "los", "las", "y", "es", "para", "por", "una"},
             "pt": {"o", "os", "não", "para", "uma", "com", "são", "do"}}
    scores = {lang: sum(w in m for w in words) for lang, m in marks.items()}
    best = max(scores, key=lambda k: scores[k])
    return best if scores[best] >= 2 and scores[best] * 20 >= len(words) else "en"


def segment(text: str, language: str | None = None) -> tuple[Unit, ...]:
    """``text`` cut into lines, each line into sentences (module doc); blank lines and the
    whitespace around units belong to no unit."""
    from pysbd.languages import LANGUAGE_CODES

    lang = language or _language(text)
    lang = _CLOSEST.get(lang, lang)
    if lang not in LANGUAGE_CODES:
        raise ConfigError(f"no sentence rules for language {lang!r}; pass one of "
                          f"{', '.join(sorted(LANGUAGE_CODES))}")
    seg = _segmenter(lang)
    out: list[Unit] = []
    pos = 0
    for n, line in enumerate(text.splitlines(keepends=True), start=1):
        spans = [(pos + s.start, pos + s.end) for s in seg.segment(line)] if line.strip() else []
        cores = _joined(text, [c for c in (_core(text, a, b) for a, b in spans) if c[1] > c[0]])
        out += [Unit(index=len(out) + i, line=n, start=a, end=b, text=text[a:b],
                     alone=len(cores) == 1) for i, (a, b) in enumerate(cores, start=1)]
        pos += len(line)
    return tuple(out)


def _joined(text: str, cores: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The cuts pysbd made inside a sentence undone: after an abbreviation (:data:`_TITLES`)
    or before a word in lower case (a sentence never starts so)."""
    out: list[tuple[int, int]] = []
    for a, b in cores:
        if out and _inside(text[out[-1][0]:out[-1][1]], text[a:b]):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _inside(before: str, after: str) -> bool:
    words = before.split()
    last = words[-1].lower().rstrip(".") if words and before.endswith(".") else None
    return after[:1].islower() or after[:1] in "-–,;" or (
        last is not None and last.lstrip("(") in _TITLES)


def _core(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def without_units(text: str, units: Sequence[Unit], drop: Collection[int]) -> str:
    """``text`` without the units whose ``index`` is in ``drop``: each unit goes with the
    spaces after it on its line, and a line left with no unit goes whole (its line break
    too); everything else stays as it was."""
    gone = [u for u in units if u.index in drop]
    if not gone:
        return text
    cut: list[tuple[int, int]] = []
    for u in gone:
        start, end = u.start, u.end
        while end < len(text) and text[end] in " \t":
            end += 1
        if not any(k.line == u.line and k.index > u.index and k.index not in drop
                   for k in units):  # the line's last unit left: the spaces before it go
            while start > 0 and text[start - 1] in " \t":
                start -= 1
        cut.append((start, end))
    lines_left = {u.line for u in units if u.index not in drop}
    starts = _line_starts(text)
    for line in {u.line for u in gone} - lines_left:
        a, b = starts[line - 1], starts[line]
        cut.append((a, b))
    out, pos = [], 0
    for a, b in sorted(cut):
        if b <= pos:
            continue
        out.append(text[pos:max(a, pos)])
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    if len(starts) == 1:
        starts.append(len(text))
    return starts


@dataclass(frozen=True, slots=True, kw_only=True)
class TextEdit:
    """Replace the piece's recorded text ``old`` by ``new`` wherever a request holds it
    (the system text, any message)."""

    old: str
    new: str

    def __post_init__(self) -> None:
        if not self.old:
            raise ConfigError("TextEdit(old='') would edit nothing; give the piece's text")

    def found(self, request: LLMRequest) -> bool:
        """The request holds the piece's text (so the edit changes it)."""
        return self.old in request.system or any(self.old in m.content
                                                 for m in request.messages)

    def apply(self, request: LLMRequest) -> LLMRequest:
        if not self.found(request):
            return request
        return replace(request, system=request.system.replace(self.old, self.new),
                       messages=tuple(replace(m, content=m.content.replace(self.old, self.new))
                                      if self.old in m.content else m
                                      for m in request.messages))


class EditedProvider:
    """A provider that applies ``edit`` to each request before ``inner`` serves it, and
    counts the requests that held the piece (``applied``)."""

    def __init__(self, edit: TextEdit, inner: Provider) -> None:
        self.edit, self.inner = edit, inner
        self.applied = 0

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if self.edit.found(request):
            self.applied += 1
        return await self.inner.complete(self.edit.apply(request))
