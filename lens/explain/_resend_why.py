"""``why --resend``: the re-send tier run end to end, and ``lens.why`` with both tiers.

Reads the explained call's recorded request (:mod:`lens.explain._request`),
plans and announces the calls, re-sends it through a provider
(:class:`lens.explain._resend.Resender`) under the re-run tier's own baseline,
search and verdicts (:func:`lens.explain._why._causal`), and scopes the
claims to the request (spec/explain.md: the re-send tier).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.events import ContextInjected, LLMEnd, RunSource, ToolEnd
from footprint.providers import LLMRequest, Message, Provider
from lens.explain._candidates import Candidate, CandidateKind, Removal
from lens.explain._custody import overlap
from lens.explain._outcome import Comparator, make_comparator
from lens.explain._params import SendParams, send_params, words
from lens.explain._past import Landing, Past, causal_past, landings_of
from lens.explain._report import ResendInfo, Suspect, WhyReport, render_why
from lens.explain._request import (
    Part,
    Piece,
    RecordedRequest,
    excerpt,
    pieces_of,
    request_of,
)
from lens.explain._rerun import Progress
from lens.explain._resend import Limits, Plan, Resender, plan_of, provider_of
from lens.explain._sentence_search import sentence_plan
from lens.explain._why import DEFAULT_SEEDS, Judge, _causal, _judge, _load, _Loaded
from lens.explain._why import why as rerun_why
from lens.playback._stream import clip

__all__ = ["SCOPE", "render_resend", "why"]

SCOPE = "request-level; later steps of the agent were not re-run"


def _landed(loaded: _Loaded, past: Past, slot: str) -> list[ContextInjected]:
    """The pieces that landed in ``slot`` of the explained call, in the order they landed."""
    got: Sequence[Landing] = loaded.landings if loaded.landings is not None else \
        landings_of(loaded.events, past)
    step = past.explained.step_id
    return sorted((g.piece for g in got if g.step == step and g.piece.slot == slot),
                  key=lambda e: e.seq)


def _parts(loaded: _Loaded, past: Past, slot: str = "system-prompt") -> list[Part]:
    """The explained call's landed parts of ``slot``, in the order they landed (of the
    messages slot, only the documents: each message is a piece of its own anyway)."""
    return [Part(id=e.injection_id or ("base prompt" if e.source == "base" else e.source),
                 text=e.raw_content or "", flavor=e.source)
            for e in _landed(loaded, past, slot)
            if slot == "system-prompt" or e.source == "rag"]


_KIND: dict[str, CandidateKind] = {
    "system": "injection", "document": "injection", "message": "message",
    "exchange": "tool_result", "tool": "tool_definition"}


def _candidate(p: Piece, past: Past, origin: str | None) -> Candidate:
    step = past.explained.step_id
    where = f" ({len(p.at)} copies)" if len(p.at) > 1 else ""
    chain = (f"in the recorded request of {step}{where}",) + ((origin,) if origin else ())
    return Candidate(kind=_KIND[p.kind], id=p.id, label=p.label, flavor=p.flavor,
                     step_id=step, seq=past.explained.start.seq, chain=chain,
                     excerpt=excerpt(p), score=round(overlap(p.text, past.answer), 4),
                     removal=Removal("piece", p.id), reach=(step,))


def _origins(loaded: _Loaded, past: Past, rec: RecordedRequest) -> dict[str, str]:
    """Where each message and tool call came from, as far as the recording tells."""
    mine = [e for e in loaded.events if isinstance(e, LLMEnd)]
    chooser = {e.tool_call_id: e.parent_step for e in loaded.events
               if isinstance(e, ToolEnd) and e.parent_step}
    chooser |= {c.id: e.step_id for e in mine for c in e.tool_calls}
    said = {e.content: e.step_id for e in mine if e.content}
    earlier = {e.tool_call_id for e in loaded.earlier if isinstance(e, ToolEnd)}
    injected = {e.raw_content: e.injection_id or e.source
                for e in _landed(loaded, past, "messages") if e.raw_content}
    out: dict[str, str] = {}
    for p in rec.pieces:
        if p.kind == "exchange":
            call = p.at[0]
            out[p.id] = (f"origin: chosen by {chooser[call]}" if call in chooser else
                         "origin: a call of an earlier turn" if call in earlier else "")
        elif p.kind == "message":
            m = rec.request.messages[int(p.at[0])]
            out[p.id] = f"origin: {injected[m.content]!r} (recorded in the messages slot)" \
                if m.content in injected else _said_by(m, said, past.turn)
    return {k: v for k, v in out.items() if v}


def _said_by(m: Message, said: dict[str, str], turn: int) -> str:
    if m.role == "assistant" and m.content in said:
        return f"origin: said by {said[m.content]} of this run"
    if turn > 0 and m.role in ("user", "assistant"):
        return f"origin: the {'person' if m.role == 'user' else 'agent'} in an earlier turn"
    return f"origin: a {m.role} message the recording does not trace further"


def why(store_or_events: Any, run: str | None = None, *, agent: Any | None = None,
        step: str | None = None, expect: str | None = None, judge: Judge | str | None = None,
        budget: int | None = None, label: bool = False, seeds: int | None = None,
        alpha: float = 0.05, progress: Progress | None = None, resend: Any | None = None,
        base_url: str | None = None, model: str | None = None,
        plan: Plan | None = None, params: Mapping[str, Any] | None = None,
        limits: Limits | None = None, sentences: bool = True) -> WhyReport:
    """:func:`lens.explain._why.why`, plus the re-send tier: with ``resend`` (a
    ``Provider``, a factory of one or ``FILE.py:FACTORY``) the recorded request of the
    explained call is re-sent without pieces (or, with ``base_url``, through an
    OpenAI-compatible server; ``model`` overrides the recorded model name), with the
    recorded generation parameters (:mod:`lens.explain._params`; ``params`` supplies or
    overrides some: ``{"max_tokens": 256, "stop": ["\n"]}``); ``plan(line)`` hears the
    planned number of calls (re-runs, in the agent tier) before any is spent. ``limits``
    bound each call and all of them (default 120 s a call, 900 s in all:
    :class:`lens.explain._resend.Limits`). ``sentences=False`` skips the search for the
    sentence(s) inside a confirmed piece."""
    resending = resend is not None or base_url is not None
    _check_tier(resending, agent=agent, model=model, params=params, limits=limits)
    if not resending:
        return rerun_why(store_or_events, run, agent=agent, step=step, expect=expect,
                         judge=judge, budget=budget, label=label, seeds=seeds, alpha=alpha,
                         progress=progress, plan=plan, sentences=sentences)
    _check(budget, seeds, alpha)
    from lens.playback._source import opened

    ask = _Ask(step=step, expect=expect, judge=judge, budget=budget, label=label,
               seeds=seeds or DEFAULT_SEEDS, alpha=alpha, progress=progress, model=model,
               plan=plan, supplied=dict(params or {}),
               limits=limits if limits is not None else Limits(), wire=base_url is not None,
               sentences=sentences)
    through = _carrier(resend, base_url, model, ask.limits.call_s)
    with opened(store_or_events) as source:
        return _tiered(_load(source, run, step, reruns=False), through, ask)


def _check_tier(resending: bool, *, agent: Any | None, model: str | None,
                params: Mapping[str, Any] | None, limits: Limits | None) -> None:
    """Refuse options of the tier not chosen: re-send options without ``resend=``, or an
    agent to re-run with it."""
    if not resending:
        if model is not None or params or limits is not None:
            raise ConfigError("model=, params= and limits= belong to the re-send "
                              "tier; pass resend= too")
    elif agent is not None:
        raise ConfigError("agent= and resend= are two tiers (re-run the agent, or re-send one "
                          "request); pick one")


def _carrier(resend: Any | None, base_url: str | None, model: str | None,
             call_s: float) -> Callable[[SendParams], Provider]:
    """The provider each re-send goes through: ``resend``'s (made now), or an
    OpenAI-compatible one at ``base_url`` (made for the parameters sent)."""
    chosen = provider_of(resend) if base_url is None else None

    def through(sent: SendParams) -> Provider:
        return chosen if chosen is not None else provider_of(
            None, base_url=base_url, model=model, sent=sent, call_s=call_s)

    return through


def _check(budget: int | None, seeds: int | None, alpha: float) -> None:
    if budget is not None and budget < 1:
        raise ConfigError(f"budget={budget} allows no re-send; pass 1 or more (or none)")
    if seeds is not None and seeds < 1:
        raise ConfigError(f"seeds={seeds}; pass 1 or more")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha={alpha}; pass a level between 0 and 1, e.g. 0.05")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ask:
    step: str | None
    expect: str | None
    judge: Judge | str | None
    budget: int | None
    label: bool
    seeds: int
    alpha: float
    progress: Progress | None
    model: str | None
    plan: Plan | None
    supplied: dict[str, Any]
    limits: Limits
    wire: bool
    """Re-sent through ``--base-url``: every parameter goes on the wire as recorded."""
    sentences: bool = True
    """Search a confirmed piece for its sentence(s) (``--no-sentences``: not)."""


def _sent(loaded: _Loaded, past: Past, a: _Ask, request: LLMRequest,
          through: Callable[[SendParams], Provider]) -> tuple[SendParams, Provider, list[str]]:
    """The parameters each re-send carries, the provider carrying them, and the flags."""
    foreign = _is_foreign(loaded)
    step = past.explained.step_id
    sent = send_params(past.explained.start, request, a.supplied, foreign=foreign)
    provider = through(sent)
    flags = words(sent, step, foreign)
    lost = sorted(sent.extras()) if not a.wire else []
    if lost:
        flags.append(f"not-carried: {', '.join(lost)} of {step} cannot reach "
                     f"{provider.name!r} (a Provider gets max_tokens, temperature and stop on "
                     "the request); its own settings apply, or re-send with --base-url")
    return sent, provider, flags


def _is_foreign(loaded: _Loaded) -> bool:
    return any(isinstance(e, RunSource) for e in loaded.events)


def _unreproduced(r: WhyReport, rr: Resender, sent: SendParams, *,
                  foreign: bool) -> WhyReport:
    """When the unchanged re-sends agree with each other on an answer other than the
    recorded one: say that the request does not reproduce it, and what was not sent."""
    b = r.baseline
    if b is None or b.same or b.varies or not rr.unchanged:
        return r
    got, step = rr.unchanged[0], r.step
    where = "trace" if foreign else "recording"
    why = (f"not in the {where}: {', '.join(sent.missing)} (supply them with --max-tokens, "
           "--temperature, --stop or --param KEY=JSON and re-send)" if sent.missing else
           "every recorded parameter was sent, so the model or server that answered is not "
           "the one recorded")
    n = b.runs - b.broke
    text = (f"the re-sent request does not reproduce the recorded answer: {n}/{n} unchanged "
            f"re-sends of {step} answered {clip(got, 60)!r}, the recording "
            f"{clip(r.answer, 60)!r}; {why}")
    return replace(r, conclusion="inconclusive", conclusion_text=f"{text} ({SCOPE})",
                   flags=(f"not-reproduced: {text}", *r.flags))


def _tiered(loaded: _Loaded, through: Callable[[SendParams], Provider], a: _Ask) -> WhyReport:
    """Plan, announce, baseline, search and scope (module doc)."""
    past = causal_past(loaded.events, a.step, Resender.tier.words, failure=False)
    comparator = _comparator(past, a)
    step = past.explained.step_id
    _recorded(loaded, step, past.explained.start.request_ref)
    recorded = request_of(past.explained.start.request_ref, step)
    sent, provider, flags = _sent(loaded, past, a, recorded, through)
    rec, more = _pieces(loaded, past, step, sent.apply(recorded))
    flags += more
    origins = _origins(loaded, past, rec)
    cands = [_candidate(p, past, origins.get(p.id)) for p in rec.pieces]
    flags += _foreign(loaded, step)
    planned, line = plan_of(len(cands), a.seeds, a.budget, a.limits)
    if a.plan is not None:
        a.plan(f"{line}\n{sentence_plan(a.sentences)}")
    info = ResendInfo(provider=provider.name, request=step, pieces=len(cands),
                      planned_calls=planned, scope=SCOPE, params=dict(sent.params),
                      not_in_trace=sent.missing)
    report = _unsent_report(loaded, past, comparator, a, info, flags)
    rr = Resender(rec, provider, past, comparator, model=a.model, budget=a.budget,
                  progress=a.progress, limits=a.limits)
    out = _resent(report, rr, cands, a, provider)
    return _unreproduced(_scoped(out, step, rr), rr, sent, foreign=_is_foreign(loaded))


def _comparator(past: Past, a: _Ask) -> Comparator:
    """How re-sent answers are compared with the recorded one; refused when the recorded
    answer already is the one ``--expect`` wants."""
    fn, name = _judge(a.judge)
    comparator = make_comparator(expect=a.expect, judge=fn, judge_name=name, label=a.label)
    if comparator.mode == "expect" and comparator.recorded_key(past.answer) == "expected":
        raise ConfigError(f"the recorded answer already matches --expect {a.expect!r}; "
                          "nothing to explain — give the answer you wanted instead")
    return comparator


def _unsent_report(loaded: _Loaded, past: Past, comparator: Comparator, a: _Ask,
                   info: ResendInfo, flags: Sequence[str]) -> WhyReport:
    """The report before any re-send: the recording's side, scoped to the request."""
    return WhyReport(
        run_id=past.run_id, step=info.request, answer=past.answer,
        outcome=comparator.recorded_key(past.answer), comparator=comparator.describe,
        comparator_mode=comparator.mode, mode="CAUSAL", conclusion="correlational",
        conclusion_text="", suspects=(), run_status=past.status, alpha=a.alpha,
        flags=(f"request-level: the recorded request of {info.request} was re-sent through "
               f"{info.provider!r} with pieces removed; claims hold for that request ("
               f"{SCOPE})", *past.flags, *flags),
        events_read=loaded.read, events_total=loaded.total, resend=info)


def _resent(report: WhyReport, rr: Resender, cands: Sequence[Candidate], a: _Ask,
            provider: Provider) -> WhyReport:
    """Baseline and search by re-sending (the provider closed after); refused when the
    provider failed every baseline re-send."""
    try:
        out = _causal(report, rr, cands, a.seeds, a.alpha, sentences=a.sentences)
    finally:
        rr.close()
    base = out.baseline
    if rr.errors and base is not None and base.runs and base.broke == base.runs:
        raise RunError(f"the provider {provider.name!r} failed every baseline re-send of "
                       f"{report.step} ({rr.errors[0]}); check --provider or --base-url/--model")
    return out


def _pieces(loaded: _Loaded, past: Past, step: str, request: LLMRequest,
            ) -> tuple[RecordedRequest, list[str]]:
    """The explained call's request (as re-sent) in pieces: its system text cut at the
    parts that landed there, the documents that landed in its messages cut out of them."""
    return pieces_of(request, _parts(loaded, past), past.user_message, step,
                     _parts(loaded, past, "messages"))


def _recorded(loaded: _Loaded, step: str, request: str | None) -> None:
    """Refuse, before any call is planned, a foreign call whose trace held no request."""
    src = next((e for e in loaded.events if isinstance(e, RunSource)), None)
    if request or src is None:
        return
    raise ConfigError(
        f"{step} of this run was mapped from a trace of {src.framework} without the request's "
        "content (content capture off, or inputs hidden), so there is nothing to re-send; "
        "turn the framework's content capture on (docs/tutorials/foreign-agents.md: the "
        "'content capture' column) and record it again, or drop --resend for the correlational "
        "report")


def _foreign(loaded: _Loaded, step: str) -> list[str]:
    """What a run taken in from another framework's trace cannot tell, said once."""
    src = next((e for e in loaded.events if isinstance(e, RunSource)), None)
    if src is None:
        return []
    cut = [f for f in src.flagged if step in f]
    return [f"foreign-run: recorded from a trace of {src.framework} ({src.dialect}), fidelity "
            f"{src.fidelity}; the trace cannot tell {', '.join(src.unknown) or 'nothing more'}"
            + (f"; cut by the emitter: {'; '.join(cut)}" if cut else "")]


def _went_on(s: Suspect, rr: Resender) -> str:
    """For a confirmed removal whose re-sends asked for a tool instead of answering: say so."""
    keys = s.ids or ((s.id,) if s.id else ())
    tools = rr.called.get(frozenset(Removal("piece", k) for k in keys))
    if not tools or s.verdict != "confirmed":
        return ""
    return (f"without it the request was answered by a tool call ({', '.join(sorted(tools))}) "
            "instead: the agent would have gone on, which a re-send cannot follow; explain it "
            "with --agent to see where the agent ends")


def _scoped(r: WhyReport, step: str, rr: Resender) -> WhyReport:
    """The report with every claim scoped to the request (its words are already the re-send
    tier's: :class:`lens.explain._tier.Tier`)."""
    roots = [s for s in r.suspects if s.role == "root"]
    if r.conclusion == "confirmed" and len(roots) == 1:
        s = roots[0]
        to = f" ({', '.join(s.changes[:3])})" if s.changes else ""
        base = r.baseline
        text = (f"removing {s.label} changed the answer of request {step}{to} in "
                f"{s.flips}/{s.runs - s.broke} re-sends, confidence "
                f"{100 * (s.confidence or 0):.2f}% against {base.same if base else 0}/"
                f"{base.runs if base else 0} unchanged re-sends ({SCOPE})")
    else:
        text = f"{r.conclusion_text} ({SCOPE})"
    went = {id(s): _went_on(s, rr) for s in r.suspects}
    flags = list(r.flags)
    flags += [f"went-on: {s.label}: {went[id(s)]}" for s in r.suspects if went[id(s)]]
    return replace(r, conclusion_text=text, flags=tuple(flags), suspects=tuple(
        replace(s, note="; ".join(x for x in (s.note, went[id(s)]) if x))
        for s in r.suspects))


def render_resend(r: WhyReport) -> list[str]:
    """The report as text (:func:`lens.explain._report.render_why`, in the re-send tier's
    words), with the request re-sent and the provider named first."""
    lines = render_why(r)
    if r.resend is not None:
        lines.insert(1, f"re-sent: the recorded request of {r.resend.request} "
                        f"({r.resend.pieces} pieces) through {r.resend.provider!r}, "
                        f"{r.reruns} calls")
    return lines
