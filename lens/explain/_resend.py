"""The re-send tier: prove cause by re-sending one recorded request with pieces removed.

Where the re-run tier rebuilds the agent and re-runs its whole turn, this
tier takes the explained call's recorded request (:mod:`lens.explain._request`)
and sends it again through a provider — the unchanged request first, as the
baseline, then variants without pieces — with the same search, statistics,
comparators and report as the re-run tier. It needs no agent factory, so it
serves a native run cheaply and a run recorded from a foreign trace alike.

Its claims are request-level: "removing X changed the answer of request
llm#k in n/N re-sends"; the agent's later steps were not re-run, and the
report says so.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import Any

from footprint._errors import ConfigError
from footprint.providers import LLMRequest, LLMResponse, Provider
from lens.explain._candidates import Removal
from lens.explain._facts import canonical
from lens.explain._outcome import Comparator, effect, normalise
from lens.explain._params import SendParams
from lens.explain._past import Past
from lens.explain._request import RecordedRequest
from lens.explain._rerun import BudgetSpent, Progress, Rerun
from lens.explain._sentences import TextEdit
from lens.explain._tier import Tier
from lens.playback._stream import clip

__all__ = ["DEFAULT_CALL_S", "DEFAULT_TOTAL_S", "Limits", "Plan", "Resender", "plan_of",
           "provider_of"]

Plan = Callable[[str], None]

DEFAULT_CALL_S = 120.0
DEFAULT_TOTAL_S = 900.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """How long one re-send may take (``call_s``) and all of them together (``total_s``,
    counted from ``started``, a ``time.monotonic()`` reading)."""

    call_s: float = DEFAULT_CALL_S
    total_s: float = DEFAULT_TOTAL_S
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        for label, value in (("--call-timeout", self.call_s), ("--timeout", self.total_s)):
            if not value > 0:
                raise ConfigError(f"{label} {value} allows no re-send; pass a number of "
                                  "seconds above 0, e.g. 60")

    def left(self) -> float:
        return self.started + self.total_s - time.monotonic()

    def words(self) -> str:
        return (f"each call bounded at {self.call_s:g} s (--call-timeout), the whole command "
                f"at {self.total_s:g} s (--timeout)")


class Resender:
    """Re-sends the recorded request without some pieces, one seed at a time."""

    tier = Tier.RESEND

    def __init__(self, rec: RecordedRequest, provider: Provider, past: Past,
                 comparator: Comparator, *, model: str | None = None,
                 budget: int | None = None, progress: Progress | None = None,
                 limits: Limits | None = None) -> None:
        self.rec, self.provider, self.past = rec, provider, past
        self.limits = limits if limits is not None else Limits()
        self.comparator = comparator
        self.recorded_key = comparator.recorded_key(past.answer)
        self.model, self.budget, self.progress = model, budget, progress
        self.runs = self.made = self.saved = 0
        self.blind: list[tuple[str, str]] = []
        self.wording: dict[frozenset[Removal], list[str]] = defaultdict(list)
        self.errors: list[str] = []
        self.unchanged: list[str] = []
        """What the unchanged request answered, each time it answered."""
        self.called: dict[frozenset[Removal], set[str]] = defaultdict(set)
        """Per removal set: the tools a re-send asked for instead of answering in text."""
        self._loop = asyncio.new_event_loop()
        self.edit: TextEdit | None = None
        """When set, every re-send with removals is edited (a piece's sentences out)."""

    def close(self) -> None:
        """Release the provider's connections (an abandoned call's too) and the loop."""
        closing = getattr(self.provider, "aclose", None)
        try:
            if callable(closing):
                self._loop.run_until_complete(closing())
        finally:
            self._loop.close()

    def _send(self, request: LLMRequest, limit: float) -> LLMResponse:
        """One call, cut at ``limit`` seconds; cut or interrupted (Ctrl-C), the call is
        cancelled, which closes its connection, so the server stops generating."""
        call = asyncio.ensure_future(
            asyncio.wait_for(self.provider.complete(request), limit), loop=self._loop)
        try:
            return self._loop.run_until_complete(call)
        except BaseException:
            if not call.done():
                call.cancel()
                with suppress(BaseException):
                    self._loop.run_until_complete(call)
            raise

    def use(self, comparator: Comparator) -> None:
        self.comparator = comparator
        self.recorded_key = comparator.recorded_key(self.past.answer)

    def removable(self, removal: Removal) -> str | None:
        if removal.what != "piece" or all(p.id != removal.key for p in self.rec.pieces):
            return f"{removal.describe()} is not a piece of the recorded request"
        return None

    def cassette_ok(self) -> bool:
        return True  # every re-send is one live call; nothing is served from the recording

    def request(self, removals: Sequence[Removal], seed: int, *,
                live: bool = False) -> LLMRequest:
        """The request a trial sends: the recorded one without ``removals``, on ``seed``."""
        req = self.rec.without(r.key for r in removals)
        if self.edit is not None and not live:
            req = self.edit.apply(req)
        return replace(req, seed=seed, model=self.model or req.model)

    def rerun(self, removals: Sequence[Removal], seed: int, *, live: bool = False,
              what: str = "") -> Rerun:
        """Send the request without ``removals`` once (every send is live)."""
        if self.budget is not None and self.runs >= self.budget:
            raise BudgetSpent(f"the budget of {self.budget} {self.tier.words.trials} is spent")
        left = self.limits.left()
        if left <= 0:
            raise BudgetSpent(f"the --timeout of {self.limits.total_s:g} s passed")
        self.runs += 1
        if self.progress is not None:
            self.progress(self.runs, self.budget, what or self.tier.words.trial)
        limit = min(self.limits.call_s, left)
        try:
            got = self._send(self.request(removals, seed, live=live), limit)
        except TimeoutError:
            which = "--call-timeout" if limit == self.limits.call_s else "--timeout"
            note = f"no answer within {limit:.3g} s ({which}); the call was cancelled"
            self.errors.append(note)
            return Rerun(run="broke", answer="", note=note)
        except Exception as exc:  # a send that raises is broke, whatever it raised
            self.errors.append(f"raised {type(exc).__name__}: {exc}")  # whole: it is the why
            return Rerun(run="broke", answer="", note=f"raised {type(exc).__name__}: "
                                                      f"{clip(exc, 80)}")
        finally:
            self.made += 1
        if got.tool_calls and not got.content:
            self.called[frozenset(removals)] |= {c.name for c in got.tool_calls}
        return self._outcome(_said(got), frozenset(removals))

    def _outcome(self, text: str, removed: frozenset[Removal]) -> Rerun:
        if not removed:
            self.unchanged.append(text)
        key = self.comparator.rerun_key(self.past.answer, text)
        if key != self.recorded_key:
            return Rerun(run="changed", answer=text)
        if normalise(text) != normalise(self.past.answer):
            self.wording[removed].append(text)
        if self.comparator.mode not in ("normalised", "facts") and canonical(
                text) != canonical(self.past.answer) and effect(self.past.answer,
                                                                 text) == "value":
            self.blind.append((self.past.answer, text))
        return Rerun(run="same", answer=text)


def _said(got: LLMResponse) -> str:
    """What a response said, as :func:`lens.explain._custody.said` reads a recorded one."""
    import json

    if got.content:
        return got.content
    return "; ".join(f"{c.name}({json.dumps(dict(c.arguments), sort_keys=True)})"
                     for c in got.tool_calls)


def provider_of(provider: Any, *, base_url: str | None = None, model: str | None = None,
                sent: SendParams | None = None, call_s: float = DEFAULT_CALL_S) -> Provider:
    """The provider to re-send through: a ``Provider``, a factory of one (``FILE.py:FACTORY``
    or ``module:FACTORY``), or an OpenAI-compatible server at ``base_url`` (sending the
    parameters ``sent`` verbatim: ``tool_choice`` as recorded, the rest as body fields)."""
    if base_url is not None:
        if provider is not None:
            raise ConfigError("--provider and --base-url both say where to re-send; pick one")
        from footprint.providers import OpenAIChat

        extras = sent.extras() if sent is not None else {}
        choice = extras.pop("tool_choice", None if sent is not None and sent.complete
                            else "auto")
        return OpenAIChat(model or "default", base_url=base_url, tool_choice=choice,
                          send_seed=sent.seeded if sent is not None else True,
                          extra_body=extras or None, timeout=call_s, deadline=call_s)
    if isinstance(provider, str):
        from lens.playback._agent_ref import load_target

        provider = load_target(provider)
    if not isinstance(provider, Provider) and callable(provider):
        provider = provider()
    if not isinstance(provider, Provider):
        raise ConfigError(f"--provider gave {type(provider).__name__}, not a Provider (an "
                          "object with name and async complete(request)); name a factory "
                          "returning one, e.g. tests/models.py:make_model")
    return provider


def plan_of(pieces: int, seeds: int, budget: int | None,
            limits: Limits | None = None) -> tuple[int, str]:
    """The planned number of calls and the line that says it (before any is spent)."""
    screens = pieces + 1 + 2 * max(1, pieces.bit_length())
    confirm = 2 * seeds
    total = seeds + screens + confirm
    capped = min(total, budget) if budget is not None else total
    cap = f"; --budget {budget} caps it at {budget}" if budget is not None and budget < total \
        else ""
    return capped, (f"plan: {seeds} baseline re-sends (up to {2 * seeds} if they vary), about "
                    f"{screens} screening re-sends over {pieces} pieces, and {confirm} "
                    f"confirming re-sends per cause found (half of them interleaved "
                    f"baselines): about {total} calls{cap}"
                    + (f"; {limits.words()}" if limits is not None else ""))
