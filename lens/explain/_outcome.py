"""What counts as "the same answer" when a re-run is compared with the recording.

A :class:`Comparator` turns an answer into a key; a re-run changed the
outcome when its key differs from the recorded answer's key.

* ``normalised`` (the default) — the whole answer, lower-cased, punctuation
  dropped, whitespace folded: "149 EUR" vs "189 EUR" is a change, "Yes." vs
  "yes" is not.
* ``expect`` — ``--expect TEXT`` or ``--expect /REGEX/``: the answer the
  user wanted. The key is ``expected`` when the answer contains the text
  (normalised) or matches the regex, else ``unexpected``.
* ``judge`` — ``--judge MODULE:FUNC``: a user function ``answer -> label``.
* ``label`` — ``--label``: the answer's first word (``APPROVED: …``).

Whatever the comparator, :func:`changes` names the numbers and entities
that differ between two answers, so a report can say "149 → 189" and can
warn when the comparator saw no change although the texts differ.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from footprint._errors import ConfigError
from lens.playback._stream import clip, label_of

__all__ = [
    "Comparator",
    "ComparatorMode",
    "changes",
    "is_redacted",
    "make_comparator",
    "normalise",
]

ComparatorMode = Literal["normalised", "expect", "judge", "label"]
Judge = Callable[[str], object]

_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?![\w])")
_ENTITY = re.compile(r"\b(?:[A-Z][\w-]*[A-Z0-9][\w-]*|[A-Z]{2,}|[A-Z][a-z]+-\d[\w-]*|"
                     r"[A-Za-z]+-\d[\w-]*|[a-z]+_[a-z_]+)\b")
_REDACTED = re.compile(r"^\[(?:redacted )?sha256:([0-9a-f]{64})\]$")


def normalise(text: str) -> str:
    """Lower-cased, punctuation dropped, whitespace folded."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def is_redacted(text: str) -> str | None:
    """The sha256 a redaction marker stands for, or ``None`` for plain text."""
    m = _REDACTED.match(text.strip())
    return m.group(1) if m else None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Comparator:
    """Maps an answer to the key two answers are compared by."""

    mode: ComparatorMode
    describe: str
    _key: Callable[[str], str]

    def key(self, text: str) -> str:
        """The comparison key of ``text``."""
        return self._key(text)

    def recorded_key(self, text: str) -> str:
        """The key of the recorded answer; a redacted one is compared by its hash."""
        digest = is_redacted(text)
        return f"sha256:{digest}" if digest is not None else self._key(text)

    def rerun_key(self, recorded: str, got: str) -> str:
        """The key of a re-run's answer, hashed when the recorded answer was redacted."""
        if is_redacted(recorded) is not None:
            return f"sha256:{_sha(got)}"
        return self._key(got)


def _expect(pattern: str) -> Comparator:
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        try:
            rx = re.compile(pattern[1:-1], re.IGNORECASE)
        except re.error as exc:
            raise ConfigError(f"--expect {pattern!r} is not a valid regex ({exc}); "
                              "escape it or drop the slashes to match plain text") from exc
        return Comparator("expect", f"matches /{rx.pattern}/",
                          lambda t: "expected" if rx.search(t) else "unexpected")
    want = normalise(pattern)
    if not want:
        raise ConfigError(f"--expect {pattern!r} has no words to look for; give the answer "
                          "you wanted, e.g. --expect 'DECLINED'")
    return Comparator("expect", f"contains {clip(pattern, 40)!r}",
                      lambda t: "expected" if want in normalise(t) else "unexpected")


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
    return Comparator("normalised", "the whole answer (case, spacing and punctuation "
                      "ignored)", normalise)


def _tokens(rx: re.Pattern[str], text: str) -> list[str]:
    return [m.group(0) for m in rx.finditer(text)]


def _delta(old: list[str], new: list[str]) -> list[str]:
    """Aligned differences: ``149 → 189`` for a replaced token, ``-40``/``+30`` otherwise."""
    out: list[str] = []
    ops = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        gone, came = old[i1:i2], new[j1:j2]
        if tag == "equal":
            continue
        paired = min(len(gone), len(came))
        out += [f"{a} → {b}" for a, b in zip(gone[:paired], came[:paired], strict=True)]
        out += [f"-{a}" for a in gone[paired:]] + [f"+{b}" for b in came[paired:]]
    return out


def changes(recorded: str, got: str) -> tuple[str, ...]:
    """The numbers and entities that differ between two answers (``149 → 189``)."""
    if is_redacted(recorded) is not None:
        return () if _sha(got) == is_redacted(recorded) else ("answer hash changed",)
    out = _delta(_tokens(_NUMBER, recorded), _tokens(_NUMBER, got))
    nums = set(_tokens(_NUMBER, recorded)) | set(_tokens(_NUMBER, got))
    ents = [t for t in _tokens(_ENTITY, recorded) if t not in nums]
    ents_got = [t for t in _tokens(_ENTITY, got) if t not in nums]
    out += _delta(ents, ents_got)
    return tuple(dict.fromkeys(out))
