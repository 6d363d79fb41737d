"""Tier-2 turn routing: from scores to a verdict, and the built-in keyword scorer (spec §2.8).

:func:`decide_tier2` turns a scorer's numbers into one of four verdicts -
move, stay, menu or unmatched - with the evidence that decided it (ranked
scores, softmax relevance, the runner-up and its gap). It is pure: the same
scores always give the same verdict, and a non-finite score never wins.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, TypeAlias, runtime_checkable

from footprint._errors import ConfigError

__all__ = [
    "KeywordScorer",
    "RoutingPolicy",
    "Scorer",
    "Tier2Kind",
    "Tier2Verdict",
    "decide_tier2",
    "keyword_tokens",
    "set_cosine",
]

Tier2Kind: TypeAlias = Literal["move", "stay", "menu", "unmatched"]


@dataclass(frozen=True, slots=True)
class RoutingPolicy:
    """How tier 2 turns scores into a verdict.

    ``near_tie_margin``: a gap below it is a near tie (menu or stay);
    ``menu_size``: at most ``max(2, menu_size)`` ids are offered;
    ``floor``: a score must be above it to count, and overrides the scorer's.
    """

    near_tie_margin: float = 0.15
    menu_size: int = 3
    floor: float | None = None

    def __post_init__(self) -> None:
        margin = self.near_tie_margin
        if not _is_real(margin) or not 0 <= margin <= 1:
            raise ConfigError(
                f"RoutingPolicy(near_tie_margin={margin!r}) must be a number in [0, 1]; "
                "the default is 0.15"
            )
        size = self.menu_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ConfigError(
                f"RoutingPolicy(menu_size={self.menu_size!r}) must be an integer >= 1; "
                "the default is 3"
            )
        if self.floor is not None and not _is_real(self.floor):
            raise ConfigError(
                f"RoutingPolicy(floor={self.floor!r}) must be a finite number or None"
            )


def _is_real(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Tier2Verdict:
    """What tier 2 decided, and the numbers that decided it.

    ``scores`` are ranked best first (non-finite scores as ``-inf``; ties keep
    input order); ``relevance`` is the full softmax in the same order;
    ``runner_up`` is ``(id, gap)`` for the second alive candidate, where
    ``gap = tanh((top - second) / 2)``. ``offered`` is set only for a menu.
    """

    kind: Tier2Kind
    to: str | None
    offered: tuple[str, ...]
    relevance: tuple[tuple[str, float], ...]
    runner_up: tuple[str, float] | None
    decisive: bool
    scores: tuple[tuple[str, float], ...]


def decide_tier2(
    scores: Sequence[tuple[str, float]],
    incumbent: str | None,
    policy: RoutingPolicy,
    *,
    floor: float | None = None,
    categorical: bool = False,
) -> Tier2Verdict:
    """Decide move / stay / menu / unmatched from ``(id, score)`` pairs.

    ``floor`` is the scorer's floor; ``policy.floor`` wins when set. A
    candidate is alive when its score is finite and above the floor. The
    verdict is decisive for a categorical scorer, a lone alive candidate, or
    a gap of at least ``policy.near_tie_margin``.
    """
    ranked = _rank(scores)
    relevance = _softmax(ranked)
    effective_floor = policy.floor if policy.floor is not None else floor
    alive = [(i, s) for i, s in ranked if math.isfinite(s) and _above(s, effective_floor)]
    if not alive:
        return Tier2Verdict(
            kind="unmatched", to=None, offered=(), relevance=relevance,
            runner_up=None, decisive=False, scores=ranked,
        )
    top = alive[0][1]
    runner_up = (alive[1][0], _gap(top, alive[1][1])) if len(alive) > 1 else None
    decisive = categorical or runner_up is None or runner_up[1] >= policy.near_tie_margin
    kind, to, offered = _choose(alive, incumbent, policy, decisive)
    return Tier2Verdict(
        kind=kind, to=to, offered=offered, relevance=relevance,
        runner_up=runner_up, decisive=decisive, scores=ranked,
    )


def _choose(
    alive: list[tuple[str, float]], incumbent: str | None, policy: RoutingPolicy, decisive: bool
) -> tuple[Tier2Kind, str | None, tuple[str, ...]]:
    top_id, top = alive[0]
    if decisive:
        return ("stay" if top_id == incumbent else "move"), top_id, ()
    if incumbent is not None:
        return "stay", incumbent, ()
    near = [i for i, s in alive if _gap(top, s) < policy.near_tie_margin]
    return "menu", None, tuple(near[: max(2, policy.menu_size)])


def _rank(scores: Sequence[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    clean = [(cid, _sanitize(score)) for cid, score in scores]
    order = sorted(range(len(clean)), key=lambda k: (-clean[k][1], k))
    return tuple(clean[k] for k in order)


def _sanitize(score: object) -> float:
    if isinstance(score, bool) or not isinstance(score, int | float):
        return -math.inf
    value = float(score)
    return value if math.isfinite(value) else -math.inf


def _above(score: float, floor: float | None) -> bool:
    return floor is None or score > floor


def _gap(top: float, other: float) -> float:
    return math.tanh((top - other) / 2)


def _softmax(ranked: tuple[tuple[str, float], ...]) -> tuple[tuple[str, float], ...]:
    finite = [s for _, s in ranked if math.isfinite(s)]
    if not finite:
        return tuple((cid, 0.0) for cid, _ in ranked)
    peak = max(finite)
    weights = [math.exp(s - peak) if math.isfinite(s) else 0.0 for _, s in ranked]
    total = sum(weights)
    return tuple((cid, w / total) for (cid, _), w in zip(ranked, weights, strict=True))


# ── scorers ────────────────────────────────────────────────────────────────


@runtime_checkable
class Scorer(Protocol):
    """Scores a text against candidates ``(id, text)``; one number per candidate.

    ``floor``: scores at or below it do not count (None: no floor);
    ``categorical``: the scorer picks rather than ranks, so its top is decisive.
    """

    @property
    def name(self) -> str: ...

    @property
    def floor(self) -> float | None: ...

    @property
    def categorical(self) -> bool: ...

    def score(self, text: str, candidates: Sequence[tuple[str, str]]) -> Sequence[float]: ...


_SPLIT: Final = re.compile(r"[^a-z0-9]+")
_STOP_WORDS: Final = frozenset({
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but",
    "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on",
    "or", "our", "she", "so", "some", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "up", "us", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
    "please", "just", "want", "need", "should", "i",
})


def keyword_tokens(text: str) -> frozenset[str]:
    """The keyword scorer's tokens of ``text``.

    Lowercase, split on ``[^a-z0-9]+``, drop tokens shorter than 2 and stop
    words, and fold a trailing ``s`` on tokens of 4+ characters not ending in
    ``ss`` (``refunds`` -> ``refund``, ``class`` stays).
    """
    tokens: set[str] = set()
    for token in _SPLIT.split(text.lower()):
        if len(token) < 2 or token in _STOP_WORDS:
            continue
        if len(token) >= 4 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        tokens.add(token)
    return frozenset(tokens)


def set_cosine(a: frozenset[str], b: frozenset[str]) -> float:
    """``|A ∩ B| / sqrt(|A| |B|)``; 0 when either set is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


@dataclass(frozen=True, slots=True)
class KeywordScorer:
    """The built-in scorer: set cosine of :func:`keyword_tokens` (name ``keyword``, floor 0)."""

    name: str = "keyword"
    floor: float | None = 0.0
    categorical: bool = False

    def score(self, text: str, candidates: Sequence[tuple[str, str]]) -> Sequence[float]:
        query = keyword_tokens(text)
        return [set_cosine(query, keyword_tokens(body)) for _, body in candidates]
