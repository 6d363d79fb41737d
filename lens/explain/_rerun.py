"""Re-running the explained turn: with some candidates removed, one seed at a time.

* The **baseline** (nothing removed) calls the model live every time: it
  measures the model's own noise, which a recording cannot show.
* An **ablation** serves the recorded model responses by request hash (the
  cassette) until the first call whose request differs from the recording,
  and calls the live model from there on (:class:`CassetteFirst`); the
  report counts the model calls made and saved.
* A re-run that raises, or ends without an answer at the explained step, is
  ``broke`` — never a change of outcome.

Every re-run goes through :func:`run_turn`, the one place that knows how a
turn is run (a follow-up turn runs with its conversation restored).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from footprint._errors import ConfigError
from footprint.agent._compose import content_hash
from footprint.agent._wire import request_json
from footprint.events import Event, ListSink, LLMEnd, LLMStart, RunEnd, ToolStart
from footprint.providers import LLMRequest, LLMResponse, Provider
from lens.explain._candidates import Removal, call_text
from lens.explain._custody import said
from lens.explain._facts import canonical
from lens.explain._outcome import FAILED, STOPPED, Comparator, effect, normalise
from lens.explain._past import Past
from lens.explain._sentences import EditedProvider, TextEdit
from lens.explain._tier import Tier
from lens.playback._cassette import _response
from lens.playback._stream import clip

__all__ = ["BudgetSpent", "CassetteFirst", "Rerun", "Rerunner", "run_turn"]

Progress = Callable[[int, "int | None", str], None]


class BudgetSpent(Exception):
    """The re-run budget is used up (``--budget``)."""


class CassetteFirst:
    """A ``Provider`` serving recorded responses until the first request that differs."""

    def __init__(self, events: Sequence[Event], live: Callable[[str], Provider]) -> None:
        ends = {e.step_id: e for e in events if isinstance(e, LLMEnd)}
        self._served: dict[str, deque[LLMResponse]] = defaultdict(deque)
        for e in events:
            if isinstance(e, LLMStart) and e.step_id in ends:
                self._served[e.request_hash].append(_response(ends[e.step_id]))
        self._live = live
        self.diverged = False
        self.saved = 0
        self.made = 0

    @property
    def name(self) -> str:
        return "cassette-first"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if not self.diverged:
            queue = self._served.get(content_hash(request_json(request)))
            if queue:
                self.saved += 1
                return queue.popleft()
            self.diverged = True
        self.made += 1
        return await self._live(request.model).complete(request)


def _brains(agent: Any) -> dict[str, list[Provider]]:
    """Model name -> the providers that may serve it, from the agent as built."""
    setup = agent.setup
    found: dict[str, list[Provider]] = defaultdict(list)

    def add(model: str | None, provider: Provider | None) -> None:
        p = provider if provider is not None else setup.provider
        if all(p is not q for q in found[model or setup.model]):
            found[model or setup.model].append(p)

    add(setup.model, setup.provider)
    brains = setup.brains
    if brains is not None:
        for decl in brains.by_skill.values():
            add(decl.model, decl.provider)
        for extra in (brains.escalation, brains.decider):
            if extra is not None:
                add(extra.model, extra.provider)
    return found


class _Routed:
    """A provider that sends each request to the provider serving its model."""

    def __init__(self, live: Callable[[str], Provider]) -> None:
        self._live = live

    @property
    def name(self) -> str:
        return "routed"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await self._live(request.model).complete(request)


def run_turn(agent: Any, message: str, continue_from: Mapping[str, Any] | None) -> None:
    """Run one turn of ``agent`` (its events go to the sink it was built with)."""
    agent.run_sync(message, continue_from=continue_from)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rerun:
    """One re-run's outcome at the explained step."""

    run: Literal["same", "changed", "broke"]
    answer: str
    note: str = ""
    lost: bool = False
    """The comparator read "same" although the answer lost its values (an apology under
    ``--expect``: not the answer wanted, nor the recorded one)."""
    calls: tuple[str, ...] = ()
    """The tool calls the trial made, in order, as ``lookup_price(sku="A12")``."""


class Rerunner:
    """Builds variants of the agent and re-runs the explained turn, counting everything."""

    tier = Tier.RERUN

    def __init__(self, agent: Any, past: Past, events: Sequence[Event], comparator: Comparator,
                 *, continue_from: Mapping[str, Any] | None = None, budget: int | None = None,
                 progress: Progress | None = None,
                 factory: Callable[..., Any] | None = None) -> None:
        if not hasattr(agent, "variant") or not hasattr(agent, "setup"):
            raise ConfigError(f"why needs an Agent (with variant() and setup) to re-run; got "
                              f"{type(agent).__name__}")
        self.agent, self.past, self.events = agent, past, events
        self.comparator, self.continue_from = comparator, continue_from
        self.recorded_key = comparator.recorded_key(past.answer)
        self.budget, self.progress = budget, progress
        self.runs = 0
        self.made = 0
        self.saved = 0
        self.blind: list[tuple[str, str]] = []
        self.wording: dict[frozenset[Removal], list[str]] = defaultdict(list)
        self.answers: list[str] = []
        self.factory = factory
        self._brains = _brains(agent)
        self.edit: TextEdit | None = None
        """When set, every request of a non-live re-run is edited (a piece's sentences out)."""

    def use(self, comparator: Comparator) -> None:
        """Compare re-runs by ``comparator`` from now on."""
        self.comparator = comparator
        self.recorded_key = comparator.recorded_key(self.past.answer)

    # ── variants ─────────────────────────────────────────────────────────

    def _root(self, seed: int | None) -> Any:
        """The agent a re-run starts from: the factory's, built for ``seed``, when the
        factory takes a seed (so a model that samples draws per re-run seed)."""
        if self.factory is None or seed is None:
            return self.agent
        return self.factory(seed=seed)

    def variant(self, removals: Iterable[Removal], *, root: Any | None = None,
                **overrides: Any) -> Any:
        """The agent (``root``, else the one built for ``overrides['seed']``) with
        ``removals`` applied (a ``ConfigError`` when it cannot be built)."""
        by: dict[str, list[str]] = defaultdict(list)
        for r in removals:
            by[r.what].append(r.key)
        root = root if root is not None else self._root(overrides.get("seed"))
        setup = root.setup
        if by["tool"]:
            overrides["tools"] = tuple(t for n, t in setup.baseline_tools.items()
                                       if n not in by["tool"])
        if by["skill"]:
            overrides["hidden_skills"] = (*setup.hidden_skills, *by["skill"])
        if by["injection"]:
            return root.without(*by["injection"], **overrides)
        return root.variant(**overrides)

    def removable(self, removal: Removal) -> str | None:
        """``None`` when the agent can be rebuilt without it, else why not."""
        if removal.what == "tool" and removal.key not in self.agent.setup.baseline_tools:
            return (f"tool {removal.key!r} is not one of the agent's own tools (a skill adds "
                    "it; remove the skill instead)")
        if removal.what == "message" and self.continue_from is None:
            return "the conversation's earlier turns could not be restored"
        if removal.what == "message":
            return None if _withhold(self.continue_from, self.past, removal) is not None \
                else "the message is not in the restored history"
        try:
            self.variant([removal])
        except ConfigError as exc:
            return clip(str(exc), 100)
        return None

    # ── one re-run ───────────────────────────────────────────────────────

    def _live_of(self, root: Any) -> Callable[[str], Provider]:
        """Model name -> the provider of ``root`` (the agent built for a re-run's seed)."""
        brains = self._brains if root is self.agent else _brains(root)

        def live(model: str) -> Provider:
            return (brains.get(model) or [root.setup.provider])[0]

        return live

    def cassette_ok(self) -> bool:
        return all(len(v) == 1 for v in self._brains.values())

    def rerun(self, removals: Sequence[Removal], seed: int, *, live: bool = False,
              what: str = "") -> Rerun:
        """Re-run with ``removals`` and ``seed``; live model calls only when ``live``."""
        if self.budget is not None and self.runs >= self.budget:
            raise BudgetSpent(f"the budget of {self.budget} {self.tier.words.trials} is spent")
        self.runs += 1
        if self.progress is not None:
            self.progress(self.runs, self.budget, what or self.tier.words.trial)
        sink = ListSink()
        cassette: CassetteFirst | None = None
        try:
            root = self._root(seed)  # the seed's own agent: its live calls use its models
            if not live and self.cassette_ok():
                cassette = CassetteFirst(self.events, self._live_of(root))
            extra: dict[str, Any] = {"seed": seed, "sink": sink}
            if cassette is not None:
                extra["model_source"] = cassette
            if self.edit is not None and not live:
                extra["model_source"] = EditedProvider(self.edit, cassette or _Routed(
                    self._live_of(root)))
            agent = self.variant(removals, root=root, **extra)
            start = _withhold_all(self.continue_from, self.past, removals)
            run_turn(agent, self.past.user_message, start)
        except Exception as exc:  # a re-run that raises is broke, whatever it raised ...
            if self.past.failed:  # the recorded run gave no answer either: compared as text
                return self._count(cassette, sink, self._compared(FAILED,
                                                                  frozenset(removals)))
            if self._answered_before_raising(sink.events):  # ... unless the step came first
                return self._count(cassette, sink, self._outcome(sink.events,
                                                                 frozenset(removals)))
            return self._count(cassette, sink, Rerun(
                run="broke", answer="", note=f"raised {type(exc).__name__}: {clip(exc, 60)}"))
        return self._count(cassette, sink, self._outcome(sink.events, frozenset(removals)))

    def _answered_before_raising(self, events: Sequence[Any]) -> bool:
        """A re-run that raised after replying at the explained step, when that step is not
        the run's final answer (a failed run, ``--step``): it is compared at that step, as the
        recording (which may have raised there too) is."""
        step = self.past.explained.step_id
        return not self.past.final and any(isinstance(e, LLMEnd) and e.step_id == step
                                           for e in events)

    def _count(self, cassette: CassetteFirst | None, sink: ListSink, out: Rerun) -> Rerun:
        if cassette is not None:
            self.made += cassette.made
            self.saved += cassette.saved
        else:
            self.made += sum(1 for e in sink.events if isinstance(e, LLMStart))
        return out

    def _outcome(self, events: Sequence[Any], removed: frozenset[Removal]) -> Rerun:
        ends = [e for e in events if isinstance(e, LLMEnd)]
        if self.past.failed:  # no recorded answer: its final answer, or how it stopped
            end = next((e for e in events if isinstance(e, RunEnd)), None)
            if end is not None and end.stopped_early:
                return self._compared(STOPPED, removed)
            if end is None or not ends:
                return Rerun(run="broke", answer="", note="ended without an answer")
            return self._compared(said(ends[-1]), removed)
        if self.past.final:
            end = next((e for e in events if isinstance(e, RunEnd)), None)
            if end is None or end.stopped_early or not ends:
                why = f"stopped at {end.stopped_early}" if end and end.stopped_early else \
                    "ended without an answer"
                return Rerun(run="broke", answer="", note=why)
            text = said(ends[-1])
        else:
            at = [e for e in ends if e.step_id == self.past.explained.step_id]
            if not at:
                return Rerun(run="broke", answer="",
                             note=f"never reached {self.past.explained.step_id}")
            text = said(at[-1])
        made = tuple(call_text(e.tool_name, e.args) for e in events if isinstance(e, ToolStart))
        return replace(self._compared(text, removed), calls=made)

    def _compared(self, text: str, removed: frozenset[Removal]) -> Rerun:
        """A trial's text at the explained step, compared with the recorded one."""
        key = self.comparator.rerun_key(self.past.answer, text)
        self.answers.append(text)
        if key == self.recorded_key:
            if normalise(text) != normalise(self.past.answer):
                self.wording[removed].append(text)
            if self.comparator.mode not in ("normalised", "facts") and canonical(
                    text) != canonical(self.past.answer) and effect(self.past.answer,
                                                                     text) == "value":
                self.blind.append((self.past.answer, text))  # another value, unseen
            return Rerun(run="same", answer=text,
                         lost=effect(self.past.answer, text) == "lost")
        return Rerun(run="changed", answer=text)


def _withhold(conv: Mapping[str, Any] | None, past: Past,
              removal: Removal) -> list[dict[str, Any]] | None:
    if conv is None:
        return None
    target = next((m for m in past.history if str(m.index) == removal.key), None)
    history = list(conv.get("history") or [])
    if target is None:
        return None
    for i, m in enumerate(history):
        if m.get("role") == target.role and m.get("content") == target.content:
            return history[:i] + history[i + 1:]
    return None


def _withhold_all(conv: Mapping[str, Any] | None, past: Past,
                  removals: Sequence[Removal]) -> Mapping[str, Any] | None:
    if conv is None:
        return None
    out: dict[str, Any] = dict(conv)
    for r in removals:
        if r.what == "message":
            kept = _withhold(out, past, r)
            if kept is not None:
                out["history"] = kept
    return out
