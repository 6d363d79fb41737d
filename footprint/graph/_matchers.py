"""Entry matchers: declared data that searches the user's message (spec §2.2).

A matcher is plain, frozen data (:class:`Regex`, :class:`Keywords`,
:class:`All`, :class:`Intent`). :func:`compile_matcher` validates it once, at
build time, and returns a :class:`CompiledMatcher` whose :meth:`search`
returns the evidence of a match: the *witness* (the matched text, tidied)
and, for keywords, which keyword fired.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

from footprint._errors import ConfigError
from footprint._validate import brief, check_list

__all__ = [
    "WITNESS_CAP",
    "All",
    "CompiledMatcher",
    "Intent",
    "Keywords",
    "MatchHit",
    "Matcher",
    "Regex",
    "compile_matcher",
    "make_witness",
]

WITNESS_CAP = 80
_WHITESPACE = re.compile(r"\s+")
_KEYWORD_FLAGS = re.IGNORECASE | re.ASCII
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CAPTION_KEYWORDS = 3
# Python's inline flag letters, in the order a caption prints them.
_FLAG_LETTERS: tuple[tuple[re.RegexFlag, str], ...] = (
    (re.ASCII, "a"),
    (re.IGNORECASE, "i"),
    (re.MULTILINE, "m"),
    (re.DOTALL, "s"),
    (re.VERBOSE, "x"),
)


@dataclass(frozen=True, slots=True)
class Regex:
    """Matches when ``re.search(pattern, user_message)`` finds something."""

    pattern: str | re.Pattern[str]

    def __post_init__(self) -> None:
        if isinstance(self.pattern, re.Pattern):
            return
        if not isinstance(self.pattern, str) or not self.pattern:
            raise ConfigError(f"Regex({brief(self.pattern)}) needs a pattern text or "
                              "re.compile(...)")
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ConfigError(f"Regex({self.pattern!r}) does not compile ({exc}); fix the "
                              "pattern") from None


@dataclass(frozen=True, slots=True)
class Keywords:
    """Matches when any keyword occurs, case-insensitively, as a whole word.

    A word boundary is required only at an edge whose character is an ASCII
    word character, so ``"v2?"`` matches literally and ``"visa card"`` as a
    phrase. A list is accepted and stored as a tuple.
    """

    words: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.words, str):
            raise ConfigError(f"Keywords({self.words!r}) would match letter by letter; wrap a "
                              f"single keyword in a tuple: Keywords(({self.words!r},))")
        words = check_list(f"Keywords({brief(self.words)})", self.words, item="keywords",
                           example="Keywords(['refund', 'money back'])")
        for w in words:
            if not isinstance(w, str) or not w.strip():
                raise ConfigError(f"Keywords(...) holds {brief(w)}; each keyword is a "
                                  "non-empty text")
        object.__setattr__(self, "words", words)


@dataclass(frozen=True, slots=True)
class All:
    """Matches when every member matches; nested ``All`` is flattened."""

    members: tuple[Regex | Keywords | All, ...]

    def __post_init__(self) -> None:
        members = check_list(f"All({brief(self.members)})", self.members, item="matchers",
                             example="All([Keywords(['refund']), Regex('order \\d+')])")
        for m in members:
            if not isinstance(m, Regex | Keywords | All):
                raise ConfigError(f"All(...) holds {type(m).__name__} {brief(m)}; its members "
                                  "are Keywords(...), Regex(...) or All(...)")
        object.__setattr__(self, "members", members)


@dataclass(frozen=True, slots=True)
class Intent:
    """No predicate: only the classifier judges an intent entry (spec §2.8)."""

    intent: str
    examples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.intent, str) or not self.intent.strip():
            raise ConfigError(f"Intent({brief(self.intent)}): describe the intent in a few "
                              "words, e.g. Intent('refund money')")
        examples = check_list(f"Intent({self.intent!r}) examples", self.examples,
                              item="example messages", example="('I want my money back',)")
        object.__setattr__(self, "examples", examples)


Matcher: TypeAlias = Regex | Keywords | All | Intent


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchHit:
    """The evidence of a match: the tidied matched text and the keyword, if any.

    ``witness`` is ``None`` when the match is zero-width (a pattern such as
    ``^`` or ``(?=refund)`` matched no characters): there is no text to show.
    """

    witness: str | None
    keyword: str | None = None


def make_witness(text: str) -> str:
    """Collapse whitespace, trim, and cap at 80 characters (79 plus ``…``)."""
    tidy = _WHITESPACE.sub(" ", text).strip()
    if len(tidy) > WITNESS_CAP:
        return tidy[: WITNESS_CAP - 1] + "…"
    return tidy


# One alternative: a compiled pattern and the keyword it stands for (None for a regex).
_Alternative: TypeAlias = tuple[re.Pattern[str], str | None]
# A group matches when any alternative matches; a matcher when every group does.
_Group: TypeAlias = tuple[_Alternative, ...]


class CompiledMatcher:
    """A validated matcher, ready to search a message. Build with :func:`compile_matcher`."""

    __slots__ = ("_caption", "_groups", "matcher")

    def __init__(self, matcher: Matcher, groups: tuple[_Group, ...], caption: str) -> None:
        self.matcher = matcher
        self._groups = groups
        self._caption = caption

    def search(self, text: str) -> MatchHit | None:
        """The first member's hit when every member matches ``text``; else None.

        An intent matcher never matches on its own. Never raises.
        """
        if not self._groups or not isinstance(text, str):
            return None
        first: tuple[str, str | None] | None = None
        for group in self._groups:
            hit = _search_group(group, text)
            if hit is None:
                return None
            if first is None:
                first = hit
        assert first is not None
        return MatchHit(witness=make_witness(first[0]) or None, keyword=first[1])

    def caption(self) -> str:
        """The mermaid edge caption of spec §2.11 (unescaped)."""
        return self._caption

    def __repr__(self) -> str:
        return f"CompiledMatcher({self.matcher!r})"


def _search_group(group: _Group, text: str) -> tuple[str, str | None] | None:
    for pattern, keyword in group:
        found = pattern.search(text)
        if found is not None:
            return found.group(0), keyword
    return None


def compile_matcher(m: Matcher, *, where: str) -> CompiledMatcher:
    """Validate ``m`` and precompile its patterns.

    Raises :class:`ConfigError` naming ``where`` (the entry) for an empty or
    invalid pattern, an empty keyword list, a blank keyword, an empty ``All``,
    an ``All`` holding an intent, or a malformed intent.
    """
    if isinstance(m, Intent):
        _check_intent(m, where)
        return CompiledMatcher(m, (), f"intent {m.intent}")
    if isinstance(m, Regex | Keywords):
        return CompiledMatcher(m, (_compile_member(m, where),), _member_caption(m))
    if isinstance(m, All):
        members = _flatten(m, where)
        groups = tuple(_compile_member(member, where) for member in members)
        caption = " AND ".join(_member_caption(member) for member in members)
        return CompiledMatcher(m, groups, caption)
    raise ConfigError(
        f"{where}: match {m!r} is not a matcher; use Regex(...), Keywords((...)), "
        "All((...)) or Intent(...)"
    )


def _flatten(m: All, where: str) -> tuple[Regex | Keywords, ...]:
    if not isinstance(m.members, tuple) or not m.members:
        raise ConfigError(
            f"{where}: All({m.members!r}) has no members; give it at least one Regex or Keywords"
        )
    flat: list[Regex | Keywords] = []
    for member in m.members:
        if isinstance(member, All):
            flat.extend(_flatten(member, where))
        elif isinstance(member, Regex | Keywords):
            flat.append(member)
        elif isinstance(member, Intent):
            raise ConfigError(
                f"{where}: All(...) holds Intent({member.intent!r}); an intent cannot be "
                "ANDed with patterns - declare it as its own entry"
            )
        else:
            raise ConfigError(
                f"{where}: All(...) member {member!r} is not a matcher; "
                "use Regex(...) or Keywords((...))"
            )
    return tuple(flat)


def _compile_member(m: Regex | Keywords, where: str) -> _Group:
    if isinstance(m, Regex):
        return ((_compile_regex(m.pattern, where), None),)
    return _compile_keywords(m.words, where)


def _compile_regex(pattern: object, where: str) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise ConfigError(
                f"{where}: Regex({pattern!r}) is a bytes pattern; use a str pattern"
            )
        source = pattern.pattern
    elif isinstance(pattern, str):
        source = pattern
    else:
        raise ConfigError(
            f"{where}: Regex({pattern!r}) needs a str or a compiled str pattern"
        )
    if source == "":
        raise ConfigError(
            f"{where}: Regex('') matches every message; use an unconditional entry instead"
        )
    if isinstance(pattern, re.Pattern):
        return pattern
    try:
        return re.compile(source)
    except re.error as exc:
        raise ConfigError(
            f"{where}: Regex({source!r}) does not compile ({exc}); fix the pattern"
        ) from exc


def _compile_keywords(words: object, where: str) -> _Group:
    if not isinstance(words, tuple) or not words:
        hint = " (wrap a single keyword in a tuple)" if isinstance(words, str) else ""
        raise ConfigError(
            f"{where}: Keywords({words!r}) needs a non-empty tuple of keywords{hint}"
        )
    group: list[_Alternative] = []
    for word in words:
        if not isinstance(word, str) or not word.strip():
            raise ConfigError(
                f"{where}: keyword {word!r} in Keywords({words!r}) must be a non-blank string; "
                "remove it or spell the word"
            )
        group.append((re.compile(_keyword_source(word.strip()), _KEYWORD_FLAGS), word))
    return tuple(group)


def _keyword_source(word: str) -> str:
    body = r"\s+".join(re.escape(part) for part in word.split())
    head = r"\b" if word[0] in _ASCII_WORD else ""
    tail = r"\b" if word[-1] in _ASCII_WORD else ""
    return head + body + tail


def _check_intent(m: Intent, where: str) -> None:
    if not isinstance(m.intent, str) or not m.intent.strip():
        raise ConfigError(
            f"{where}: Intent({m.intent!r}) needs a non-blank intent text naming what the "
            "user wants"
        )
    if not isinstance(m.examples, tuple):
        raise ConfigError(
            f"{where}: Intent examples {m.examples!r} must be a tuple of strings"
        )
    seen: set[str] = set()
    for example in m.examples:
        if not isinstance(example, str) or not example.strip():
            raise ConfigError(
                f"{where}: intent example {example!r} must be a non-blank string; remove it"
            )
        folded = " ".join(example.split()).casefold()
        if folded in seen:
            raise ConfigError(
                f"{where}: intent example {example!r} is listed twice; remove the duplicate"
            )
        seen.add(folded)


def _member_caption(m: Regex | Keywords) -> str:
    if isinstance(m, Regex):
        if isinstance(m.pattern, re.Pattern):
            flags = "".join(ch for flag, ch in _FLAG_LETTERS if m.pattern.flags & flag)
            return f"/{m.pattern.pattern}/{flags}"
        return f"/{m.pattern}/"
    shown = ", ".join(m.words[:_CAPTION_KEYWORDS])
    extra = len(m.words) - _CAPTION_KEYWORDS
    return f"{shown}, +{extra} more" if extra > 0 else shown
