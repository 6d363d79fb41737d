"""Why: walk back from an answer to everything that may have produced it, then test it.

Two tiers of claim, never mixed (spec/explain.md §3.1):

* CORRELATIONAL — the loop-aware custody walk (:mod:`lens.explain._past`) lists
  every candidate on the answer's causal past (:mod:`lens.explain._candidates`),
  ranked by word overlap with the answer. Overlap is resemblance; the report
  uses no causal word.
* CAUSAL — only with a runner (an agent the lens can rebuild): live baseline
  re-runs of the unchanged agent, then delta debugging over every removable
  candidate (:mod:`lens.explain._search`), and an exact test for each culprit set
  found (:mod:`lens.explain._stats`). Re-runs that crash or never answer are
  ``broke``, never a change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from footprint._errors import ConfigError, FootprintError
from footprint.events import Event, LLMEnd, LLMStart, RunStart
from lens.explain._candidates import Candidate, Removal, candidates, one_per_removal
from lens.explain._facts import fact_key
from lens.explain._outcome import (
    changes,
    facts_comparator,
    is_redacted,
    make_comparator,
    normalise,
)
from lens.explain._past import Landing, Past, causal_past
from lens.explain._path import causal_order
from lens.explain._report import Baseline, ModelCalls, WhyReport
from lens.explain._rerun import BudgetSpent, Progress, Rerun, Rerunner
from lens.explain._search import SearchResult, plan_line, screen_budget, search
from lens.explain._sentence_search import attribute, sentence_plan
from lens.explain._stats import Tally, baseline_stable, seeds_needed
from lens.explain._tier import Tier
from lens.explain._trial import Trial
from lens.explain._verdicts import Seen, conclude, suspects_of
from lens.playback._conversation import conversation_of, resolve_run, restore_turn
from lens.playback._stream import clip

__all__ = ["DEFAULT_SEEDS", "Judge", "why"]

DEFAULT_SEEDS = 12
Judge = Callable[[str], object]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Loaded:
    events: list[Event]
    earlier: list[Event]
    read: int
    total: int
    source: Any
    landings: list[Landing] | None = None


def _load(source: Any, run: str | None, step: str | None, reruns: bool) -> _Loaded:
    if hasattr(source, "rows") and hasattr(source, "resolve_run"):
        from lens.explain._read import read_earlier, read_past

        got = read_past(source, source.resolve_run(run or "last"), step, every_reply=reruns)
        start = next((e for e in got.events if isinstance(e, RunStart)), None)
        earlier = read_earlier(source, start.conversation_id, start.turn) if start else []
        return _Loaded(events=got.events, earlier=earlier, read=got.read, total=got.total,
                       source=source, landings=got.landings)
    rid = resolve_run(source, run or "last")
    if hasattr(source, "events") and callable(source.events):  # a recording folder
        mine = list(source.events(rid))
        earlier = [e for t in conversation_of(source, rid)[:-1] for e in t.events]
    elif isinstance(source, Sequence):
        mine = [e for e in source if e.run_id == rid]
        start = next(e for e in mine if isinstance(e, RunStart))
        earlier = [e for e in source if e.run_id != rid and e.turn < start.turn]
    else:
        raise ConfigError(f"why reads a store (lens.open_store(path)), a store or recording "
                          f"folder path, or a list of events; got {type(source).__name__}")
    return _Loaded(events=mine, earlier=earlier, read=len(mine), total=len(mine), source=source)


def _judge(judge: Judge | str | None) -> tuple[Judge | None, str]:
    if judge is None or callable(judge):
        return judge, getattr(judge, "__name__", "the judge")
    from lens.playback._agent_ref import load_target

    fn = load_target(judge)
    if not callable(fn):
        raise ConfigError(f"--judge {judge!r} names {type(fn).__name__}, not a function; "
                          "name a function answer -> label")
    return fn, judge


def _restore(loaded: _Loaded, past: Past, agent: Any) -> tuple[Mapping[str, Any] | None, str]:
    """The conversation before the explained turn (``None`` on turn 0), or why not."""
    if past.turn == 0:
        return None, ""
    try:
        restored = restore_turn(loaded.source, past.run_id, agent)
    except FootprintError as exc:
        return None, clip(str(exc), 200)
    return restored.continue_from, ""


def _flags(past: Past, cands: Sequence[Candidate], events: Sequence[Event]) -> list[str]:
    flags = list(past.flags)
    hidden = [c.label for c in cands if c.redacted]
    if hidden:
        flags.append(f"redacted: {len(hidden)} candidate(s) kept only a hash of their text "
                     f"({', '.join(hidden[:3])}); they are not scored and are compared by hash")
    if is_redacted(past.answer) is not None:
        flags.append("redacted-answer: the recorded answer is a hash; re-runs are compared by "
                     "the hash of their answer, made as the marker was (keyed: with its key)")
    return flags + _dropped_prompt(past, events)


def _prompt_chars(start: LLMStart) -> int | None:
    import json

    try:
        body = json.loads(start.request_ref or "")
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    texts = [str(body.get("system") or "")] + [
        str(m.get("content") or "") for m in body.get("messages") or () if isinstance(m, dict)]
    return sum(len(t) for t in texts)


def _dropped_prompt(past: Past, events: Sequence[Event]) -> list[str]:
    """The path's first call recorded input tokens under a quarter of its prompt's chars/4.

    The first call only: its request is the smallest to parse (a system prompt and the
    person's message), and a template that drops a part drops it from every call."""
    call = past.calls[0]
    tokens = next((e.input_tokens for e in events
                   if isinstance(e, LLMEnd) and e.step_id == call.step_id), 0) or 0
    chars = _prompt_chars(call.start) if tokens else None
    if chars and chars >= 64 and 16 * tokens < chars:
        return [f"prompt-dropped: {call.step_id} recorded {tokens} input tokens for a "
                f"{chars}-character prompt (~{chars // 4} expected); the server may have "
                "dropped part of the prompt (e.g. a chat template without a system role)"]
    return []


def _baseline(rr: Trial, seeds: int) -> tuple[Tally, Baseline, str | None]:
    """Live re-runs of the unchanged agent; twice as many when the first ones vary.

    A noisy model can look stable in a few runs by chance; when any of the
    first ``seeds`` runs changed, ``seeds`` more measure the noise before
    any ablation is compared with it. When they changed only in wording (their
    facts all agree with the recording), answers are compared by facts from
    then on (:func:`_by_facts`).
    """
    tally = Tally()
    got_all: list[Rerun] = []
    stopped: str | None = None
    seed = 0
    while seed < seeds or (seed < 2 * seeds and tally.changed > 0):
        try:
            got = rr.rerun((), seed, live=True, what="baseline (live)")
        except BudgetSpent as exc:
            stopped = f"{exc} during the baseline"
            break
        tally = tally.add(got.run)
        got_all.append(got)
        seed += 1
    if tally.changed and _by_facts(rr, got_all):
        tally = Tally(same=tally.answered, broke=tally.broke)
    outs = tuple(rr.comparator.rerun_key(rr.past.answer, g.answer) if g.run != "broke"
                 else f"(broke: {g.note})"
                 for g in got_all)
    answered = {o for o, g in zip(outs, got_all, strict=True) if g.run != "broke"}
    return tally, Baseline(runs=tally.runs, same=tally.same, changed=tally.changed,
                           broke=tally.broke, stable=baseline_stable(tally),
                           outcomes=outs, varies=len(answered) > 1), stopped


def _by_facts(rr: Trial, runs: Sequence[Rerun]) -> bool:
    """Switch the default comparator to facts when the baseline varied only in wording."""
    recorded = fact_key(rr.past.answer)
    answered = [g.answer for g in runs if g.run != "broke"]
    if rr.comparator.mode != "normalised" or not recorded or not answered:
        return False
    if any(fact_key(a, like=rr.past.answer) != recorded for a in answered):
        return False
    varied = sum(normalise(a) != normalise(rr.past.answer) for a in answered)
    rr.use(facts_comparator(varied, len(answered)))
    return True


def _units(rr: Trial, cands: Sequence[Candidate]) -> tuple[list[Removal], dict[Removal, str]]:
    units: list[Removal] = []
    refused: dict[Removal, str] = {}
    for c in cands:
        r = c.removal
        if r is None or r in units or r in refused:
            continue
        why_not = rr.removable(r)
        if why_not is None:
            units.append(r)
        else:
            refused[r] = why_not
    return units, refused


def why(store_or_events: Any, run: str | None = None, *, agent: Any | None = None,
        step: str | None = None, expect: str | None = None, judge: Judge | str | None = None,
        budget: int | None = None, label: bool = False, seeds: int | None = None,
        alpha: float = 0.05, progress: Progress | None = None,
        allow_mismatch: bool = False, plan: Callable[[str], None] | None = None,
        sentences: bool = True) -> WhyReport:
    """Explain the answer at ``step`` (default: the last model call) of run ``run``.

    ``store_or_events`` is a recorder ``Store``, a path to a store or a
    recording folder, or a list of events; ``run`` a run id, a unique prefix
    or ``'last'``. With ``agent`` (the ``Agent`` that made the run, a factory
    or a ``MODULE:FACTORY`` string) the report is CAUSAL: re-runs test every
    removable candidate. ``expect``/``judge``/``label`` choose how answers
    are compared; ``budget`` caps re-runs; ``seeds`` (default 12) and
    ``alpha`` (0.05) set the tests; ``progress(done, total, what)`` hears
    each re-run. The agent is first checked against the recorded configuration
    (model, provider, tools, graph, injections by id and hash): a difference raises
    ``ConfigError`` naming it, unless ``allow_mismatch``. ``plan(line)`` hears the
    planned number of re-runs before any is made. A confirmed root piece is then searched
    for the sentence(s) its effect comes from (:mod:`lens.explain._sentence_search`)
    unless ``sentences`` is false.
    """
    if budget is not None and budget < 1:
        raise ConfigError(f"budget={budget} allows no re-run; pass 1 or more (or none)")
    if seeds is not None and seeds < 1:
        raise ConfigError(f"seeds={seeds}; pass 1 or more")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha={alpha}; pass a level between 0 and 1, e.g. 0.05")
    from lens.playback._source import opened

    runner, factory = _runner(agent)
    with opened(store_or_events) as source:
        return _why(source, run, runner, step, _Options(
            expect=expect, judge=judge, budget=budget, label=label, seeds=seeds or DEFAULT_SEEDS,
            alpha=alpha, progress=progress, factory=factory, allow_mismatch=allow_mismatch,
            plan=plan, sentences=sentences))


def _runner(agent: Any) -> tuple[Any | None, Callable[..., Any] | None]:
    """The agent to re-run (from an Agent, a factory or ``MODULE:FACTORY``), and a
    ``seed -> Agent`` builder when the factory takes a ``seed``: each re-run's model
    is then built for that re-run's seed."""
    if agent is None:
        return None, None
    import functools
    import inspect

    from footprint.events import NullSink
    from lens.playback._agent_ref import build_agent, load_target

    target = load_target(agent) if isinstance(agent, str) else agent
    if hasattr(target, "run_sync") or not callable(target):
        return target, None
    runner = build_agent(target, NullSink())
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return runner, None
    if not any(p.name == "seed" or p.kind is p.VAR_KEYWORD for p in params):
        return runner, None
    return runner, lambda seed: build_agent(functools.partial(target, seed=seed), NullSink())


@dataclass(frozen=True, slots=True, kw_only=True)
class _Options:
    expect: str | None
    judge: Judge | str | None
    budget: int | None
    label: bool
    seeds: int
    alpha: float
    progress: Progress | None
    factory: Callable[..., Any] | None = None
    allow_mismatch: bool = False
    plan: Callable[[str], None] | None = None
    sentences: bool = True


def _why(source: Any, run: str | None, agent: Any | None, step: str | None,
         o: _Options) -> WhyReport:
    expect, judge, label, alpha = o.expect, o.judge, o.label, o.alpha
    loaded = _load(source, run, step, reruns=agent is not None)
    past = causal_past(loaded.events, step)
    fn, name = _judge(judge)
    comparator = make_comparator(expect=expect, judge=fn, judge_name=name, label=label)
    if comparator.mode == "expect" and comparator.recorded_key(past.answer) == "expected":
        raise ConfigError(f"the recorded answer already matches --expect {expect!r}; nothing "
                          "to explain — give the answer you wanted instead")
    path = past.path_steps
    on_path = None if loaded.landings is None else [
        g for g in loaded.landings if g.step in path]
    cands = one_per_removal(candidates(loaded.events, past, loaded.earlier, on_path))
    report = WhyReport(
        run_id=past.run_id, step=past.explained.step_id, answer=past.answer,
        outcome=comparator.recorded_key(past.answer), comparator=comparator.describe,
        comparator_mode=comparator.mode, mode="CORRELATIONAL", conclusion="correlational",
        conclusion_text="", suspects=(), run_status=past.status, alpha=alpha,
        flags=tuple(_flags(past, cands, loaded.events)), events_read=loaded.read,
        events_total=loaded.total)
    if agent is None:
        return conclude(replace(report, suspects=suspects_of(cands, None, {}, past.answer),
                                flags=("no-runner", *report.flags)), None)
    if not o.allow_mismatch:
        _same_configuration(loaded.events, agent)
    continue_from, why_not = _restore(loaded, past, agent)
    if past.turn > 0 and continue_from is None:
        flag = (f"conversation-not-restored: run is turn {past.turn} of a conversation and its "
                f"earlier turns could not be restored ({why_not}); re-runs would start a new "
                "conversation, so none were made")
        return conclude(replace(report, suspects=suspects_of(cands, None, {}, past.answer),
                                flags=(flag, *report.flags)), None)
    rr = Rerunner(agent, past, loaded.events, comparator, continue_from=continue_from,
                  budget=o.budget, progress=o.progress, factory=o.factory)
    return _causal(report, rr, cands, o.seeds, alpha, o.plan, sentences=o.sentences)


def _same_configuration(events: Sequence[Event], agent: Any) -> None:
    """Refuse an agent built unlike the recorded run (its re-runs would explain another
    agent), naming the first differences."""
    from lens.explain._agentcheck import configuration_changes

    changes = configuration_changes(events, agent)
    if changes:
        more = f" (and {len(changes) - 3} more)" if len(changes) > 3 else ""
        raise ConfigError(
            "the agent to re-run is not configured as the recorded run: "
            f"{'; '.join(changes[:3])}{more}; build the recorded release (footprint replay "
            "shows every difference), or pass --allow-mismatch (allow_mismatch=True) to "
            "explain with this agent anyway")


def _causal(report: WhyReport, rr: Trial, cands: Sequence[Candidate], seeds: int,
            alpha: float, plan: Callable[[str], None] | None = None, *,
            sentences: bool = True) -> WhyReport:
    flags, w = list(report.flags), rr.tier.words
    if not rr.cassette_ok():
        flags.append("cassette-off: one model name is served by several providers, so every "
                     f"{w.trial} calls the model live")
    units, refused = _units(rr, cands)
    if plan is not None:
        plan(f"{plan_line(len(units), seeds, rr.budget, w)}\n{sentence_plan(sentences)}")
    per_test = alpha / max(1, len(units))
    base_tally, baseline, stopped = _baseline(rr, seeds)
    if stopped is not None:
        result: SearchResult | None = _spent_in_baseline(rr, units, seeds, stopped)
    else:
        result = _search(rr, base_tally, baseline, units, flags, seeds=seeds, per_test=per_test,
                         order=report.run_id)
    flags += _blind(rr)
    out = replace(report, seeds=seeds, alpha_per_test=per_test, baseline=baseline,
                  flags=tuple(flags))
    found = _ordered(out, rr, cands, refused, result)
    return attribute(found, rr, result, seeds=seeds, alpha=alpha) if sentences else found


def _spent_in_baseline(rr: Trial, units: Sequence[Removal], seeds: int,
                       stopped: str) -> SearchResult:
    """The budget was spent in the baseline: every removal untested, and ``more`` asks for
    the baseline's re-runs and then the whole search."""
    more = max(rr.runs + 1, seeds + screen_budget(len(units), seeds))
    return SearchResult(findings=(), probes=(), cleared=frozenset(), broke=frozenset(),
                        untested=tuple(units), stopped=stopped, more=more)


def _not_searched(units: Sequence[Removal], why: str) -> SearchResult:
    """No search made: every removal is left unjudged, for ``why``."""
    return SearchResult(findings=(), probes=(), cleared=frozenset(), broke=frozenset(),
                        untested=(), unjudged=frozenset(units), unjudged_why=why)


def _search(rr: Trial, tally: Tally, baseline: Baseline, units: list[Removal],
            flags: list[str], *, seeds: int, per_test: float, order: str) -> SearchResult | None:
    """Search the removals against a baseline that reproduced the recording and held still;
    otherwise add to ``flags`` why not, and leave the removals unjudged."""
    w = rr.tier.words
    if tally.same == 0:
        flags.insert(0, f"baseline-unreproduced: {w.unchanged} never gave the recorded "
                        "outcome, so no removal can be compared with it")
        if rr.tier is Tier.RESEND and not baseline.varies:  # nothing to search against
            return _not_searched(
                units, f"not searched: {w.unchanged} never reproduced the recorded answer")
        return None
    if not baseline.stable:
        flags.insert(0, f"baseline-unstable: {w.unchanged} changed its outcome in "
                        f"{tally.changed}/{tally.answered} live {w.trials} (and its "
                        "facts changed too); give --expect TEXT or --judge MODULE:FUNC to "
                        "compare only what matters")
        return _not_searched(units, (
            f"not searched: {w.unchanged}'s own outcome varies "
            f"({tally.changed}/{tally.answered} live {w.trials} changed), so no "
            "removal's effect can be told from that noise"))
    need = seeds_needed(tally.answered, per_test)
    if need is None or need > seeds:
        flags.append(f"too-few-seeds: {seeds} seeds cannot reach confidence "
                     f"{1 - per_test:.4g} per test; use --seeds {need or 'more'} or more")
    return search(rr, tally, units, seeds=seeds, alpha=per_test, order=order,
                  wanted=rr.comparator.mode in _WANTED)


def _ordered(report: WhyReport, rr: Trial, cands: Sequence[Candidate],
             refused: Mapping[Removal, str], result: SearchResult | None) -> WhyReport:
    """Suspects with their verdicts, in causal order, and the conclusion they support."""
    seen = Seen(answer=report.answer, expect=rr.comparator.mode == "expect", worded=rr.wording,
                words=rr.tier.words)
    order = causal_order(suspects_of(cands, result, refused, seen), cands, report.step,
                         expect=seen.expect)
    out = replace(report, mode="CAUSAL", suspects=order.suspects, reruns=rr.runs,
                  model_calls=ModelCalls(made=rr.made, saved=rr.saved),
                  untested=tuple(u.describe() for u in (result.untested if result else ())),
                  comparator=rr.comparator.describe, comparator_mode=rr.comparator.mode,
                  outcome=rr.recorded_key)
    return conclude(out, result, order)


_WANTED = frozenset({"expect", "judge", "label"})
"""Comparators that call a re-run changed only when it gives the outcome asked for."""

_REMEDY = {
    "label": "compare whole answers (drop --label) or give --expect TEXT",
    "expect": "give an --expect that only the answer you want contains (or --judge)",
    "judge": "check that the judge tells these answers apart, or give --expect TEXT",
}


def _blind(rr: Trial) -> list[str]:
    """Re-runs the chosen comparator called "same" although their facts differ."""
    if not rr.blind or rr.comparator.mode not in _REMEDY:
        return []
    a, b = rr.blind[0]
    what = ", ".join(changes(a, b)[:3]) or "the wording"
    return [f"comparator-blind: {rr.comparator.describe} saw no change, but {len(rr.blind)} "
            f"{rr.tier.words.trial} answer(s) differ from the recording in their facts ({what}); "
            f"{_REMEDY[rr.comparator.mode]}"]

