"""Why: walk back from an answer to the context that may have produced it, then test it.

Two tiers of claim, never mixed (spec/explain.md §3.1):

* CORRELATIONAL — the custody walk lists every piece of the answering
  call's prompt and every tool result it read, each with the recorded events
  that put it there, ranked by word overlap with the answer. Overlap is
  resemblance; the report says so and uses no causal word.
* CAUSAL — only with a runner (an agent the lens can rebuild): a baseline of
  N seeded re-runs of the unchanged agent first, then each of the top K
  removable suspects removed (``agent.without(id)``) for N seeds. A suspect
  is ``confirmed`` when more than half of its re-runs change the outcome,
  ``inconclusive`` when some do, ``not-confirmed`` when none do; an unstable
  baseline makes every verdict ``inconclusive`` (flag ``baseline-unstable``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from footprint._errors import ConfigError, FootprintError
from footprint.events import Event, ListSink, LLMEnd, RunStart
from lens._custody import Custody, Piece, ToolRead, answer_custody, said
from lens._stream import clip, label_of

__all__ = [
    "Baseline",
    "Suspect",
    "WhyReport",
    "outcome_of",
    "render_why",
    "why",
    "why_json",
]

Verdict = Literal["confirmed", "inconclusive", "not-confirmed"]
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Suspect:
    """One candidate on the answer's custody chain, with its re-run verdict when tested."""

    rank: int
    kind: Literal["injection", "base", "tool"]
    id: str
    label: str
    flavor: str | None
    score: float
    seq: int
    chain: str
    excerpt: str
    verdict: Verdict | None = None
    flips: int = 0
    runs: int = 0
    outcomes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Baseline:
    """The unchanged agent re-run with each seed: did it reproduce the recorded outcome?"""

    outcomes: tuple[str, ...]
    stable: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class WhyReport:
    """The answer, the mode, the ranked suspects, the baseline and every honesty flag."""

    run_id: str
    step: str
    answer: str
    outcome: str
    comparator: Literal["label", "exact"]
    mode: Literal["CAUSAL", "CORRELATIONAL"]
    suspects: tuple[Suspect, ...]
    seeds: int = 0
    baseline: Baseline | None = None
    flags: tuple[str, ...] = field(default_factory=tuple)


# ── the outcome of a call ─────────────────────────────────────────────────


def outcome_of(events: Sequence[Any], step: str | None, exact: bool) -> str:
    """The outcome a run gave at ``step`` (the last model call when ``None``)."""
    ends = [e for e in events if isinstance(e, LLMEnd)]
    if step is not None:
        ends = [e for e in ends if e.step_id == step]
    if not ends:
        return f"(no {step or 'model call'})"
    text = said(ends[-1])
    return text if exact else label_of(text)


# ── suspects (correlational) ──────────────────────────────────────────────


def _piece_suspect(p: Piece) -> Suspect:
    e = p.landed
    born = f" · BORN seq {p.born.seq}" if p.born is not None else ""
    return Suspect(
        rank=0, kind="injection" if e.injection_id else "base",
        id=e.injection_id or e.source, label=p.label, flavor=str(e.source),
        score=round(p.score, 4), seq=e.seq,
        chain=f"LANDED {e.slot} seq {e.seq} · ALLOWED {p.allowed_text()}{born}",
        excerpt=clip(e.raw_content or e.content_summary, 80))


def _tool_suspect(r: ToolRead) -> Suspect:
    e = r.end
    args = json.dumps(dict(r.start.args), sort_keys=True) if r.start is not None else "?"
    return Suspect(
        rank=0, kind="tool", id=e.tool_call_id, label=r.label, flavor=None,
        score=round(r.score, 4), seq=e.seq,
        chain=f"READ as message · RETURNED by {e.tool_name}({clip(args, 50)}) seq {e.seq}",
        excerpt=clip(e.result, 80))


def rank_suspects(custody: Custody) -> tuple[Suspect, ...]:
    """One suspect per injection (its best piece), per base piece and per tool result read."""
    best: dict[tuple[str, str], Suspect] = {}
    for s in [*map(_piece_suspect, custody.pieces), *map(_tool_suspect, custody.tools)]:
        key = (s.kind, s.id)
        if key not in best or s.score > best[key].score:
            best[key] = s
    ordered = sorted(best.values(), key=lambda s: (-s.score, s.seq))
    return tuple(replace(s, rank=i) for i, s in enumerate(ordered, start=1))


# ── counterfactual re-runs (causal) ───────────────────────────────────────


class _Runner:
    """Re-runs the agent (minus some injections) with one seed and reads the outcome."""

    def __init__(self, agent: Any, message: str, step: str | None, exact: bool,
                 total: int, progress: Progress | None) -> None:
        self.agent, self.message, self.step, self.exact = agent, message, step, exact
        self.total, self.done, self.progress = total, 0, progress

    def removable(self, suspect: Suspect) -> str | None:
        """``None`` when ``agent.without(id)`` works, else why it cannot be removed."""
        if suspect.kind == "base":
            return "the agent's own system prompt"
        if suspect.kind == "tool":
            return "a tool result (remove the tool or its skill instead)"
        try:
            self.agent.without(suspect.id)
        except ConfigError as exc:
            return clip(str(exc), 90)
        return None

    def outcome(self, without: tuple[str, ...], seed: int) -> str:
        self.done += 1
        what = f"without {without[0]!r}" if without else "baseline"
        if self.progress is not None:
            self.progress(self.done, self.total, f"{what} · seed {seed}")
        sink = ListSink()
        try:
            agent = (self.agent.without(*without, seed=seed, sink=sink) if without
                     else self.agent.variant(seed=seed, sink=sink))
            agent.run_sync(self.message)
        except FootprintError as exc:
            return f"(failed: {clip(exc, 40)})"
        return outcome_of(sink.events, self.step, self.exact)


def _verdict(flips: int, n: int, stable: bool) -> Verdict:
    if not stable:
        return "inconclusive"
    if 2 * flips > n:
        return "confirmed"
    return "inconclusive" if flips else "not-confirmed"


def _pick(runner: _Runner, suspects: Sequence[Suspect],
          top: int) -> tuple[list[Suspect], list[str]]:
    """The top ``top`` removable suspects, and a flag for each one passed over."""
    chosen: list[Suspect] = []
    flags: list[str] = []
    for s in suspects:
        if len(chosen) >= top:
            break
        why_not = runner.removable(s)
        if why_not is None:
            chosen.append(s)
        else:
            flags.append(f"not-removable: {s.label} — {why_not}")
    return chosen, flags


def _ablate(runner: _Runner, suspects: tuple[Suspect, ...], seeds: int, top: int,
            recorded: str) -> tuple[tuple[Suspect, ...], Baseline, list[str]]:
    chosen, flags = _pick(runner, suspects, top)
    runner.total = seeds * (1 + len(chosen))
    outcomes = tuple(runner.outcome((), s) for s in range(seeds))
    baseline = Baseline(outcomes=outcomes, stable=all(o == recorded for o in outcomes))
    if not baseline.stable:
        flags.insert(0, "baseline-unstable")
    tested: dict[str, Suspect] = {}
    for s in chosen:
        got = tuple(runner.outcome((s.id,), seed) for seed in range(seeds))
        flips = sum(o != recorded for o in got)
        tested[s.id] = replace(s, verdict=_verdict(flips, seeds, baseline.stable), flips=flips,
                               runs=seeds, outcomes=got)
    out = tuple(tested.get(s.id, s) if s.kind == "injection" else s for s in suspects)
    return out, baseline, flags


def why(events: Sequence[Event], *, agent: Any | None = None, step: str | None = None,
        seeds: int = 3, top: int = 3, exact: bool = False,
        progress: Progress | None = None) -> WhyReport:
    """Explain the answer at ``step`` (default: the last model call) of a recorded run."""
    custody = answer_custody(events, step)
    start = next((e for e in events if isinstance(e, RunStart)), None)
    if custody is None or start is None:
        raise ConfigError("the run has no model call (or no run.start) to explain; "
                          "pick a run that answered (see `footprint runs`)")
    if top < 1:
        raise ConfigError(f"--top {top} would test nothing; use 1 or more")
    suspects = rank_suspects(custody)
    recorded = outcome_of(events, custody.call.step_id, exact)
    flags = [] if custody.tools_from_request else [
        "no-request-record: the request text was not kept, so every earlier tool result "
        "is listed as read"]
    report = WhyReport(
        run_id=start.run_id, step=custody.call.step_id, answer=custody.answer, outcome=recorded,
        comparator="exact" if exact else "label", mode="CORRELATIONAL", suspects=suspects)
    if agent is None:
        return replace(report, flags=("no-runner", *flags))
    n = max(2, seeds)
    runner = _Runner(agent, start.user_message, step, exact, n, progress)
    tested, baseline, more = _ablate(runner, suspects, n, top, recorded)
    return replace(report, mode="CAUSAL", suspects=tested, seeds=n, baseline=baseline,
                   flags=(*more, *flags))


# ── rendering ──────────────────────────────────────────────────────────────


def _stamp(s: Suspect, recorded: str) -> str | None:
    if s.verdict is None:
        return None
    others = sorted({o for o in s.outcomes if o != recorded})
    to = f" {recorded} → {', '.join(others)}" if others else ""
    if s.verdict == "confirmed":
        return (f"CAUSAL {s.flips}/{s.runs} — removing it changed the outcome{to} in "
                f"{s.flips}/{s.runs} seeded re-runs (confirmed)")
    if s.verdict == "inconclusive":
        return f"inconclusive {s.flips}/{s.runs} — outcome changed{to} in some re-runs only " \
               "or against an unstable baseline"
    return f"not confirmed 0/{s.runs} — removing it left the outcome {recorded}"


def _header(r: WhyReport) -> list[str]:
    by = "the exact answer" if r.comparator == "exact" else "the answer's label"
    lines = [f"why · run {r.run_id} · {r.step}",
             f"answer: {clip(r.answer, 110)}",
             f"outcome ({by}): {r.outcome}"]
    if r.mode == "CAUSAL":
        lines.append(f"mode: CAUSAL — counterfactual re-runs, {r.seeds} seeds each, baseline "
                     "first; the ranking itself stays correlational (word overlap)")
    else:
        lines.append("mode: CORRELATIONAL — suspects ranked by word overlap with the answer: "
                     "resemblance only, no re-runs were made (pass --agent MODULE:FACTORY "
                     "to re-run without each suspect)")
    if r.baseline is not None:
        b = r.baseline
        same = sum(o == r.outcome for o in b.outcomes)
        lines.append(f"baseline: {r.outcome} in {same}/{len(b.outcomes)} seeded re-runs of the "
                     f"unchanged agent" + ("" if b.stable else " — UNSTABLE, so every verdict "
                                           "below is inconclusive"))
    return lines


def render_why(r: WhyReport, top: int = 8) -> list[str]:
    """The report as text lines: header, suspects with their chains, honesty flags."""
    lines = _header(r)
    lines.append("suspects (rank · word overlap with the answer · custody chain):")
    shown = [s for s in r.suspects if s.rank <= top or s.verdict is not None]
    for s in shown:
        lines.append(f"  {s.rank:>2}. {clip(s.label, 34):<34} {s.score:.2f}  {s.chain}")
        lines.append(f"      “{s.excerpt}”")
        stamp = _stamp(s, r.outcome)
        if stamp is not None:
            lines.append(f"      → {stamp}")
    if len(r.suspects) > len(shown):
        lines.append(f"  … {len(r.suspects) - len(shown)} more (lower overlap)")
    lines.append("flags:" + ("" if r.flags else " none"))
    lines += [f"  ⚠ {f}" for f in r.flags]
    return lines


def why_json(r: WhyReport) -> str:
    """The report as JSON."""
    return json.dumps(asdict(r), ensure_ascii=False, indent=2)
