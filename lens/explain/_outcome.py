"""What counts as "the same answer" when a re-run is compared with the recording.

A :class:`Comparator` turns an answer into a key; a re-run changed the
outcome when its key differs from the recorded answer's key.

* ``normalised`` (the default) — the whole answer with its facts in normal
  form (:func:`lens.explain._facts.canonical`), lower-cased, punctuation
  dropped, whitespace folded: "149 EUR" vs "189 EUR" is a change; "Yes." vs
  "yes", "1 pm" vs "13:00" and "€189" vs "189 EUR" are not.
* ``facts`` — chosen by ``why`` itself when the unchanged agent's answers
  vary only in wording: the answer's set of facts (numbers, times, dates,
  money, units, entities), wording ignored.
* ``expect`` — ``--expect TEXT`` or ``--expect /REGEX/``: the answer the
  user wanted. The key is ``expected`` when the answer contains the text
  (both in canonical form, so ``--expect 11:00`` matches "11 am") or
  matches the regex, else ``unexpected``.
* ``judge`` — ``--judge MODULE:FUNC``: a user function ``answer -> label``.
* ``label`` — ``--label``: the answer's first word (``APPROVED: …``).

Whatever the comparator, :func:`changes` names the facts that differ
between two answers ("149 EUR → 189 EUR", never a re-written time as a
changed number), :func:`wording` the words that differ when the facts held,
and :func:`effect` tells a changed value from a lost answer.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from footprint._errors import ConfigError
from lens.explain._facts import VALUE_KINDS, Fact, canonical, fact_key, facts
from lens.playback._redacted import digest_like, parse_marker, require_key
from lens.playback._stream import clip, label_of

__all__ = [
    "FAILED",
    "STOPPED",
    "Comparator",
    "ComparatorMode",
    "Effect",
    "changes",
    "effect",
    "facts_comparator",
    "is_redacted",
    "make_comparator",
    "normalise",
    "wording",
]

ComparatorMode = Literal["normalised", "facts", "expect", "judge", "label"]
Effect = Literal["value", "lost", "wording"]
Judge = Callable[[str], object]

_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)
_LOST = re.compile(r"\b(?:sorry|apolog\w*|cannot|can't|could not|couldn't|unable|"
                   r"don't know|no (?:\w+ )?(?:figure|price|information|data|answer))\b",
                   re.IGNORECASE)
_CALLS = re.compile(r"^\w+\(\{.*\}\)(?:; \w+\(\{.*\}\))*$", re.DOTALL)
"""A reply that is only tool calls, as ``_custody.said`` writes one: ``name({json})``."""


def normalise(text: str) -> str:
    """Lower-cased, punctuation dropped, whitespace folded."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def is_redacted(text: str) -> str | None:
    """The digest a redaction marker holds (keyed ``hmac-sha256`` or an older unkeyed
    ``sha256``: ``lens.playback._redacted``), or ``None`` for plain text."""
    m = parse_marker(text)
    return m.digest if m else None


_ANSWER = "the recorded answer"


@dataclass(frozen=True, slots=True)
class Comparator:
    """Maps an answer to the key two answers are compared by."""

    mode: ComparatorMode
    describe: str
    _key: Callable[[str], str]
    _like: Callable[[str, str], str] | None = None
    """The key of an answer read next to the one it is compared with (``March 3`` is
    ``2026-03-03`` next to it); ``None``: the key alone."""

    def key(self, text: str) -> str:
        """The comparison key of ``text``."""
        return self._key(text)

    def recorded_key(self, text: str) -> str:
        """The key of the recorded answer; a redacted one is compared by its hash (a keyed
        one only with its key at hand, else a :class:`ConfigError` naming the fix)."""
        m = parse_marker(text)
        if m is None:
            return self._key(text)
        require_key(m, _ANSWER)
        return f"{m.scheme}:{m.digest}"

    def rerun_key(self, recorded: str, got: str) -> str:
        """The key of a re-run's answer, hashed like the recorded answer when it was redacted."""
        m = parse_marker(recorded)
        if m is not None:
            return f"{m.scheme}:{digest_like(m, got, what=_ANSWER)}"
        return self._key(got) if self._like is None else self._like(got, recorded)


def _expect(pattern: str) -> Comparator:
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        try:
            rx = re.compile(pattern[1:-1], re.IGNORECASE)
        except re.error as exc:
            raise ConfigError(f"--expect {pattern!r} is not a valid regex ({exc}); "
                              "escape it or drop the slashes to match plain text") from exc
        return Comparator("expect", f"matches /{rx.pattern}/",
                          lambda t: "expected" if rx.search(t) else "unexpected")
    want = canonical(pattern)
    if not want:
        raise ConfigError(f"--expect {pattern!r} has no words to look for; give the answer "
                          "you wanted, e.g. --expect 'DECLINED'")
    bare = any(f.kind == "number" for f in facts(pattern))  # --expect 920: "920.00 EUR"

    def holds(text: str, **how: bool) -> bool:  # whole words: APPROVED is not DISAPPROVED
        return f" {want} " in f" {canonical(text, like=pattern, **how)} "

    def key(text: str, _: str = "") -> str:
        found = holds(text) or (bare and holds(text, bare=True))
        return "expected" if found else "unexpected"

    return Comparator("expect", f"contains {clip(pattern, 40)!r}", key, key)


def _judge(fn: Judge, name: str) -> Comparator:
    def key(text: str) -> str:
        return str(fn(text))
    return Comparator("judge", f"labelled by {name}", key)


def make_comparator(*, expect: str | None = None, judge: Judge | None = None,
                    judge_name: str = "the judge", label: bool = False) -> Comparator:
    """The comparator the options ask for (at most one of them)."""
    given = [n for n, v in (("--expect", expect), ("--judge", judge), ("--label", label)) if v]
    if len(given) > 1:
        raise ConfigError(f"{' and '.join(given)} both set how answers are compared; "
                          "pick one")
    if expect is not None:
        return _expect(expect)
    if judge is not None:
        if not callable(judge):
            raise ConfigError(f"judge {judge!r} is not callable; pass a function "
                              "answer -> label, e.g. --judge mymodule:verdict")
        return _judge(judge, judge_name)
    if label:
        return Comparator("label", "the answer's first word", label_of)
    return Comparator("normalised", "the whole answer (facts in normal form: 1 pm = 13:00, "
                      "€189 = 189 EUR; case, spacing and punctuation ignored)", canonical,
                      canonical)


def facts_comparator(varied: int, answered: int) -> Comparator:
    """Compare by facts alone: the default once baseline answers varied only in wording."""
    return Comparator("facts", f"facts (numbers, times, dates, money, entities) — wording "
                      f"varied in {varied}/{answered} baseline answers", fact_key, fact_key)


_Key = tuple[tuple[str, ...], tuple[str, ...]]


def _delta(old: list[Fact], new: list[Fact]) -> list[tuple[str, _Key]]:
    """Aligned fact differences: ``149 EUR → 189 EUR`` for a replaced value, ``-x``/``+y``;
    each with the normal forms it stands for."""
    out: list[tuple[str, _Key]] = []
    ops = difflib.SequenceMatcher(a=[f.token for f in old], b=[f.token for f in new],
                                  autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        gone, came = old[i1:i2], new[j1:j2]
        if tag == "equal":
            continue
        paired = min(len(gone), len(came))
        out += [(f"{a.surface} → {b.surface}", ((a.token,), (b.token,)))
                for a, b in zip(gone[:paired], came[:paired], strict=True)]
        out += [(f"-{a.surface}", ((a.token,), ())) for a in gone[paired:]]
        out += [(f"+{b.surface}", ((), (b.token,))) for b in came[paired:]]
    return out


FAILED = "(the run failed)"
"""The outcome of a run whose model call raised before it replied."""
STOPPED = "(the run stopped without an answer)"
"""The outcome of a run that hit a limit (``max_iterations``) before it answered."""
_NO_ANSWER = {FAILED: "failed", STOPPED: "stopped"}


def changes(recorded: str, got: str | Sequence[str]) -> tuple[str, ...]:
    """The facts that differ between the recorded answer and re-run answers
    (``149 EUR → 189 EUR``), by normal form: a time written another way (``1 pm`` →
    ``13:00``) is no change of fact, and one change re-worded by several re-runs is
    named once. A run that failed or stopped has no facts: ``failed → 'the reply'``."""
    answers = [got] if isinstance(got, str) else list(got)
    if recorded in _NO_ANSWER:
        return tuple(dict.fromkeys(f"{_NO_ANSWER[recorded]} → {clip(a, 40)!r}"
                                   for a in answers if a != recorded))
    m = parse_marker(recorded)
    if m is not None:
        kept = all(digest_like(m, a, what=_ANSWER) == m.digest for a in answers)
        return () if kept else ("answer hash changed",)
    old = list(facts(recorded))
    seen: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
    for answer in answers:
        new = list(facts(answer, like=recorded))
        same = {f.token for f in old} & {f.token for f in new}
        for line, key in _delta([f for f in old if f.token not in same],
                                [f for f in new if f.token not in same]):
            seen.setdefault(key, line)
    return tuple(seen.values())


def wording(recorded: str, got: str, limit: int = 2) -> tuple[str, ...]:
    """The word runs that differ (``'1 pm' → '13:00'``), for a change the comparator ignored."""
    a, b = recorded.split(), got.split()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(f"{clip(' '.join(a[i1:i2]), 30)!r} → {clip(' '.join(b[j1:j2]), 30)!r}")
    return tuple(out[:limit])


def effect(recorded: str, got: str) -> Effect:
    """What a changed answer ``got`` is, against the ``recorded`` one: ``lost`` when it is
    no answer (empty, a refusal or apology the recorded one was not, tool calls where the
    recorded call answered, or one that dropped
    more of the recorded facts than it gave other values for: the answer's content is
    gone, not changed); ``wording`` when it holds a value fact and its facts are the
    recorded answer's (``197.50 GBP`` and ``£197.50``: written otherwise); else ``value`` —
    a different well-formed answer (another decision word, number, date, entity:
    ``PENDING-REVIEW, CASE-77`` for ``APPROVED, 450 EUR``)."""
    if not got.strip() or (_LOST.search(got) and not _LOST.search(recorded)):
        return "lost"
    if _CALLS.match(got) and not _CALLS.match(recorded):
        return "lost"  # it asks for a tool where the recorded call answered: no answer yet
    old, new = list(facts(recorded, got)), list(facts(got, recorded))
    same = {f.token.lower() for f in old} & {f.token.lower() for f in new}
    if any(f.kind in VALUE_KINDS for f in old) and len(same) == len(
            {f.token.lower() for f in old}) == len({f.token.lower() for f in new}):
        return "wording"  # without a value fact, the words are the decision (a tool's name)
    delta = _delta([f for f in old if f.token.lower() not in same],
                   [f for f in new if f.token.lower() not in same])
    replaced = sum(bool(a) and bool(b) for _, (a, b) in delta)
    dropped = sum(bool(a) and not b for _, (a, b) in delta)
    return "lost" if dropped > replaced else "value"
