"""The why report: its shape, its text form and its JSON form (checked by a shipped schema)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import orjson

from lens.explain._stats import Verdict
from lens.explain._tier import Tier, Words
from lens.playback._stream import clip

__all__ = [
    "Baseline",
    "Claim",
    "Conclusion",
    "Effect",
    "Experiment",
    "ModelCalls",
    "ResendInfo",
    "Role",
    "SentenceClaim",
    "SentenceKind",
    "Span",
    "Suspect",
    "WhyReport",
    "headline",
    "path_line",
    "render_why",
    "schema",
    "sentence_line",
    "tier_of",
    "verdict_line",
    "why_dict",
    "why_json",
]

Conclusion = Literal["confirmed", "inconclusive", "cause-not-found", "broke", "correlational"]
SuspectKind = Literal["injection", "tool_result", "message", "cursor_move", "gate", "lease",
                      "tool_definition", "set"]
Effect = Literal["value", "lost", "wording"]
Role = Literal["root", "mediator", "necessary", "wording", "context"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Experiment:
    """One removal's test behind a claim: what was removed, its trials and their flips."""

    removal: str
    runs: int
    flips: int
    broke: int
    verdict: Verdict | None


ClaimKind = Literal["cause", "conjunction", "set", "redundant-set", "sentence", "user-said"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """One sentence of the headline and the experiments that back it: a ``cause`` (its own
    removal flipped the value), a ``conjunction`` (each member's own removal flipped the
    same value), a ``set`` (the joint removal flipped it) or a ``redundant-set`` (the joint
    removal flipped it and each member's own removal did not); ``user-said``: the user's own
    message, whose removal flipped the value — context of the root, never a cause."""

    kind: ClaimKind
    names: tuple[str, ...]
    experiments: tuple[Experiment, ...]
    minimal: bool | None = None
    """A set: ``True`` when each member's removal from the set was tested and lost the effect,
    ``False`` when the set without a member still changed it, ``None`` when not shown."""
    without: tuple[Experiment, ...] = ()
    """A set of three or more: the set removed but each member in turn (the tests behind
    ``minimal``; a pair's are its members' own tests)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """One sentence or line of a piece: where it is (``line 23``, ``sentence 2``) and its
    text, ``piece_text[start:end]``."""

    where: str
    start: int
    end: int
    text: str


SentenceKind = Literal["sentence", "each", "together", "whole", "unknown"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceClaim:
    """Which sentence(s) of a confirmed piece the value comes from
    (:mod:`lens.explain._sentence_search`): ``sentence`` (removing it alone flipped the
    value), ``each`` (several, each one's own removal flipped it), ``together`` (only their
    joint removal flipped it), ``whole`` (the piece is one sentence: its own test names it)
    or ``unknown`` (not found within the budget, or not searchable: ``note``)."""

    piece: str
    removal: str
    kind: SentenceKind
    spans: tuple[Span, ...]
    text: str
    """The piece's text as the requests carried it (the spans' offsets are into it)."""
    units: int
    """The sentences and lines the piece was cut into."""
    experiments: tuple[Experiment, ...]
    trials: int
    """Trials spent on this piece's sentences (screens and tests)."""
    model_calls: int
    """Model calls those trials made live."""
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Suspect:
    """One candidate (or a culprit set) with its chain and, when tested, its verdict."""

    rank: int
    kind: SuspectKind
    id: str | None
    ids: tuple[str, ...] | None
    label: str
    flavor: str | None
    step_id: str
    score: float | None
    chain: tuple[str, ...]
    excerpt: str
    verdict: Verdict | None = None
    runs: int = 0
    flips: int = 0
    broke: int = 0
    confidence: float | None = None
    p_value: float | None = None
    removable: bool = False
    removal: str | None = None
    note: str = ""
    changes: tuple[str, ...] = ()
    redacted: bool = False
    calls: tuple[str, ...] = ()
    """Every recorded call one removal covers (a dropped tool's calls), tested once."""
    effect: Effect | None = None
    """``value``: re-runs gave another well-formed answer (a candidate fix); ``lost``: they
    gave no answer (empty, a refusal, an apology), which shows the piece is needed, not that
    it misled; ``wording``: the same facts written otherwise (never a cause of a value)."""
    role: Role | None = None
    """On the causal path: the ``root`` cause, a ``mediator`` it produced; apart from it:
    ``necessary`` (its removal loses the answer) or ``wording`` (it only changes the words);
    ``context``: the user's own message, whose removal changed the value (never a root)."""
    wording: tuple[str, ...] = ()
    """Re-run text that changed while the comparator said "same": wording only under the
    default comparator; under ``--expect``/``--judge``/``--label`` possibly other facts,
    just not the outcome asked for."""
    paired_runs: int = 0
    """Live baseline re-runs interleaved with this suspect's confirming test."""
    paired_same: int = 0
    """Of those, the ones that reproduced the recorded outcome."""
    minimal: bool | None = None
    """A set: shown minimal (``True``), shown not minimal (``False``), or not shown."""
    rerun_calls: tuple[str, ...] = ()
    """A confirmed removal: the tool calls of its first re-run that changed the outcome (the
    path compares them with the recorded calls: the argument that changed)."""
    without: tuple[Experiment, ...] = ()
    """A set of three or more: the set removed but each member in turn (screen re-runs)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Baseline:
    """Live re-runs of the unchanged agent: how often they reproduced the recorded outcome."""

    runs: int
    same: int
    changed: int
    broke: int
    stable: bool
    outcomes: tuple[str, ...] = ()
    varies: bool = True
    """The live runs that answered disagree with each other (``False``: one outcome each
    time, the recorded one or not)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCalls:
    """Model calls the re-runs made live, and those the cassette served instead."""

    made: int = 0
    saved: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ResendInfo:
    """The re-send tier: the request re-sent, through which provider, and the plan."""

    provider: str
    request: str
    pieces: int
    planned_calls: int
    scope: str
    params: Mapping[str, Any] = field(default_factory=dict)
    """The generation parameters every re-send carried (the seed aside)."""
    not_in_trace: tuple[str, ...] = ()
    """Parameters the recording lacks and nobody supplied (a foreign or old run)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WhyReport:
    """Why a run answered what it did: mode, conclusion, suspects, baseline and flags."""

    run_id: str
    step: str
    answer: str
    outcome: str
    comparator: str
    comparator_mode: str
    mode: Literal["CAUSAL", "CORRELATIONAL"]
    conclusion: Conclusion
    conclusion_text: str
    suspects: tuple[Suspect, ...]
    run_status: str = "answered"
    seeds: int = 0
    alpha: float = 0.05
    alpha_per_test: float | None = None
    baseline: Baseline | None = None
    flags: tuple[str, ...] = field(default_factory=tuple)
    untested: tuple[str, ...] = ()
    reruns: int = 0
    model_calls: ModelCalls = field(default_factory=ModelCalls)
    events_read: int = 0
    events_total: int = 0
    root_causes: tuple[str, ...] = ()
    """The root cause(s) the headline names: all of a conjunction, the set of a redundant set."""
    path: tuple[str, ...] = ()
    """The causal path, root first: ``skill 'refunds'``, ``llm#2 chose
    cancel_order(order_id="R-7")`` (and what the root's re-run called instead, when it
    did), ``result #call_2: {…}``, a guard with the value it read, ``answer (llm#3)``."""
    necessary: tuple[str, ...] = ()
    """Pieces whose removal lost the answer: needed, reported apart from the root causes."""
    resend: ResendInfo | None = None
    """Set by the re-send tier (``why --resend``): claims hold for one recorded request."""
    claims: tuple[Claim, ...] = ()
    """Each claim of the headline with the experiments (removal, runs, flips) behind it."""
    sentences: tuple[SentenceClaim, ...] = ()
    """For each confirmed piece searched inside: the sentence(s) its value comes from."""
    user_said: tuple[str, ...] = ()
    """What the user said that the answer's value depends on (their earlier messages whose
    removal changed it): context of the root cause, never a root."""


def tier_of(r: WhyReport) -> Tier:
    """The tier that made the report's trials: re-send when it carries :class:`ResendInfo`."""
    return Tier.RESEND if r.resend is not None else Tier.RERUN


def path_line(r: WhyReport) -> str | None:
    """``path: skill 'refunds' → llm#2 chose cancel_order → result #call_2 → answer``."""
    return "path: " + " → ".join(r.path) if r.path else None


def headline(r: WhyReport) -> list[str]:
    """The lines a reader sees first (the CLI and the lens show the same): the conclusion
    naming the root cause(s), the causal path once, and what is only necessary."""
    lines = [f"{r.conclusion.upper()}: {r.conclusion_text}"]
    path = path_line(r)
    if path is not None:
        lines.append(path)
    if r.necessary:
        lines.append("necessary (the answer is lost without it; not a cause of its value): "
                     + ", ".join(r.necessary))
    return lines + [sentence_line(c) for c in r.sentences if c.kind != "whole"]


def sentence_line(c: SentenceClaim) -> str:
    """``sentence: line 23 of rag 'manual': “Weight: 1.9 kg”`` — what a claim names."""
    said = "; ".join(f"{s.where} of {c.piece}: “{clip(s.text, 100)}”" for s in c.spans)
    if c.kind == "sentence":
        return f"sentence: {said}"
    if c.kind == "each":
        return f"sentences (each one's removal alone changed the value): {said}"
    if c.kind == "together":
        alone = c.experiments[1:]
        held = bool(alone) and all(e.verdict == "not-confirmed" for e in alone)
        return ("sentences (only removed together did the value change): " if held else
                "sentences (removed together they changed the value): ") + said
    if c.kind == "whole":
        return f"sentence: {c.piece} is one sentence: “{clip(c.spans[0].text, 100)}”"
    return f"sentence of {c.piece}: unknown — {c.note}"


# ── text ───────────────────────────────────────────────────────────────────


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%" if x < 0.999 else f"{100 * x:.2f}%"


def _reworded(r: WhyReport) -> str:
    """What a suspect's ``wording`` note means under the report's comparator."""
    if r.comparator_mode in ("normalised", "facts"):
        return "wording changed, facts held"
    return f"changed, but not as asked ({r.comparator})"


def verdict_line(s: Suspect, r: WhyReport) -> str | None:
    """A tested suspect's verdict as one line (``CAUSAL — …``, ``NECESSARY — …``), in the
    words of the report's tier; the CLI and the lens print the same."""
    if s.verdict is None:
        return None
    w = tier_of(r).words
    tally = f"{s.flips}/{s.runs - s.broke}" + (f", {s.broke} broke" if s.broke else "")
    conf = f" · confidence {_pct(s.confidence)}" if s.confidence is not None else ""
    what = f" ({', '.join(s.changes[:3])})" if s.changes else ""
    if s.verdict == "confirmed" and s.effect == "lost":
        return (f"NECESSARY — {s.removal}: the answer was lost in {tally} {w.trials}{what}"
                f"{conf}; needed for an answer, not shown to cause its value")
    if s.verdict == "confirmed" and s.effect == "wording":
        return (f"WORDING — {s.removal}: only the wording changed in {tally} {w.trials}"
                f"{what}{conf}; the facts held, so it is no cause of the answer's value")
    if s.verdict == "confirmed" and s.role == "context":
        return (f"CONTEXT — {s.removal}: the outcome changed in {tally} {w.trials}{what}"
                f"{conf}; the user's own words, so context of the answer, never its root cause")
    if s.verdict == "confirmed" and s.kind == "set" and s.role is None and \
            r.conclusion == "confirmed":
        return (f"CAUSAL — {s.removal}: the outcome changed in {tally} {w.trials}{what}"
                f"{conf}; not a cause of its own" + (f": {s.note}" if s.note else ""))
    if s.verdict == "confirmed":
        role = {"root": "root cause", "mediator": "on the path"}.get(s.role or "", "")
        return (f"CAUSAL — {s.removal}: the outcome changed in {tally} {w.trials}{what}"
                f"{conf} (confirmed{', ' + role if role else ''})")
    if s.verdict == "inconclusive":
        return f"inconclusive — {s.removal}: changed in {tally} {w.trials}{conf}" + (
            f"; {s.note}" if s.note else "")
    if s.verdict == "broke":
        return (f"broke — {s.removal}: {s.note or f'the {w.trials} raised or never answered'}"
                "; a crash is not a change of answer")
    if s.verdict == "untested":
        return f"untested — {s.note or 'the search stopped before it'}"
    return f"not confirmed — {s.removal}: {s.note or f'changed in {tally} {w.trials}'}"


def _header(r: WhyReport) -> list[str]:
    lines = [f"why · run {r.run_id} · {r.step}" + (
        f" · run {r.run_status}" if r.run_status != "answered" else ""),
        f"answer: {clip(r.answer, 110)}",
        f"compared by: {r.comparator}"]
    w = tier_of(r).words
    if r.mode == "CAUSAL":
        lines.append(f"mode: CAUSAL — counterfactual {w.trials}; a claim needs an exact test "
                     f"at α={r.alpha} (α={r.alpha_per_test:.4g} per test after Bonferroni), "
                     f"up to {r.seeds} seeds; the ranking itself is word overlap")
    else:
        lines.append("mode: CORRELATIONAL — suspects ranked by word overlap with the answer: "
                     f"resemblance only, no {w.trials} were made (pass --agent "
                     "MODULE:FACTORY to re-run without each suspect)")
    if r.baseline is not None:
        lines.append(_baseline_line(r.baseline, w))
    if r.mode == "CAUSAL":
        lines.append(f"{w.trials}: {r.reruns} · model calls {r.model_calls.made} made, "
                     f"{r.model_calls.saved} served from the recording")
    return lines


def _baseline_line(b: Baseline, w: Words) -> str:
    return (f"baseline: {w.unchanged} reproduced the outcome in {b.same}/{b.runs} live "
            f"{w.trials}" + (f" ({b.broke} broke)" if b.broke else "")
            + ("" if b.stable else
               f" — NOT REPRODUCED: every answered {w.trial} gave the same other outcome"
               if not b.varies else " — UNSTABLE: the model's own answers vary"))


def render_why(r: WhyReport, top: int = 8) -> list[str]:
    """The report as text lines: verdict, header, suspects with chains, honesty flags."""
    lines = [*headline(r), *_header(r)]
    lines.append("suspects (rank · overlap · custody chain):")
    shown = [s for s in r.suspects if s.rank <= top or s.verdict not in (None, "not-confirmed")]
    for s in shown:
        score = "  -- " if s.score is None else f"{s.score:.2f}"
        lines.append(f"  {s.rank:>2}. [{s.kind}] {clip(s.label, 50)}  {score}")
        lines += [f"      {c}" for c in s.chain]
        if s.excerpt:
            lines.append(f"      “{s.excerpt}”")
        if len(s.calls) > 1:
            lines.append(f"      covers {len(s.calls)} calls: {clip(', '.join(s.calls), 70)}")
        stamp = verdict_line(s, r)
        if stamp is not None:
            lines.append(f"      → {stamp}")
        if s.wording:
            lines.append(f"      {_reworded(r)}: " + "; ".join(s.wording))
    if len(r.suspects) > len(shown):
        rest = "" if r.mode == "CORRELATIONAL" else ", none confirmed"
        lines.append(f"  … {len(r.suspects) - len(shown)} more (lower overlap{rest})")
    if r.untested:
        lines.append("not tested: " + ", ".join(r.untested))
    lines.append("events: " + f"{r.events_read} of {r.events_total} read")
    lines.append("flags:" + ("" if r.flags else " none"))
    lines += [f"  ⚠ {f}" for f in r.flags]
    return lines


# ── JSON ───────────────────────────────────────────────────────────────────


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of ``footprint why --json`` (shipped in the package)."""
    text = resources.files("lens").joinpath("schemas/why_report.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def why_dict(r: WhyReport) -> dict[str, Any]:
    """The report as plain JSON data, in the shape :func:`schema` describes.

    Not validated here (a thousand suspects cost ~0.3 s to validate, more than
    the walk): the tests validate every report shape against the schema.
    """
    data: dict[str, Any] = _plain(r)
    return data


def why_json(r: WhyReport) -> str:
    """The report as JSON text (the shipped schema's shape), indented by two spaces.

    orjson writes the report's dataclasses itself (tuples as lists, field
    order kept): the same data as :func:`why_dict`, ~10x cheaper than
    ``json.dumps(..., indent=2)``, whose indented mode is pure Python.
    """
    text: str = orjson.dumps(r, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    return text


@cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _plain(value: Any) -> Any:
    """JSON data of a report: dataclasses as objects, tuples as lists (no deep copies)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _names(type(value))}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value
