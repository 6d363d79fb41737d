"""Inside a confirmed piece: the sentence (or line) its effect on the value comes from.

Once the search confirmed a piece as a root cause (its own removal, or its set's joint
removal, flipped the value), the piece is cut into sentences and lines
(:mod:`lens.explain._sentences`) and searched the way the pieces were:

1. **Screen** (no claim): trials with some sentences cut out of the piece (every
   request of the trial carries the shortened text). The whole piece is known to
   matter, so the search starts by halves: a half whose removal changes the value is
   narrowed further; when neither half alone does, each is narrowed with the other
   held out (ddmin), so one sentence costs about ``2·log2(n)`` screens and two
   sentences that only matter together are found as a pair. A set found with several
   sentences is made minimal (a sentence whose return keeps the change is dropped).
   The rest of the piece is then screened once for another sentence that matters on
   its own (two sentences each needed). Only a change of *value* counts: a lost
   answer or a re-wording does not.
2. **Confirm** (the claim): each set found gets the same paired, sequential exact test
   as a piece (:func:`lens.explain._search._confirm`), at ``alpha`` divided by the
   number of sentences the search chose among; a set of several, once confirmed, has
   each sentence tested alone, so "only together" is a measured claim.

A budget that runs out leaves the sentence ``unknown``, never a guess.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from footprint.events import ContextInjected, ToolEnd
from lens.explain._candidates import Removal
from lens.explain._outcome import Comparator, effect
from lens.explain._past import Past
from lens.explain._report import Claim, Experiment, SentenceClaim, Span, Suspect, WhyReport
from lens.explain._rerun import BudgetSpent, Rerun, Rerunner
from lens.explain._resend import Resender
from lens.explain._search import Finding, SearchResult, _confirm
from lens.explain._sentences import TextEdit, Unit, segment, without_units
from lens.explain._stats import Ablation, Tally
from lens.explain._tier import Tier
from lens.explain._trial import Trial

__all__ = ["attribute", "sentence_plan"]

SCREEN_SEED0 = 2000
MAX_SETS = 3


def sentence_plan(enabled: bool) -> str:
    """The plan's second line: the sentence step, said before any trial is made."""
    if not enabled:
        return "plan: no sentence search (--no-sentences)"
    return ("plan: then, inside each confirmed piece of n sentences or lines, about "
            "2·log2(n) screening trials and one confirming test per sentence named "
            "(--no-sentences skips it)")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Target:
    suspect: Suspect
    removal: Removal
    held: tuple[Removal, ...] = ()
    """Other members of its set, removed in every trial (the piece mattered with them out)."""


class _Cut:
    """The trial maker for one piece's sentences: a removal ``Removal('piece', '<n>')`` is
    sentence ``n`` cut out of the piece's text; ``held`` removals go with every variant."""

    def __init__(self, inner: Rerunner | Resender, text: str, units: Sequence[Unit],
                 held: Sequence[Removal]) -> None:
        self.inner, self.text, self.units, self.held = inner, text, units, tuple(held)

    @property
    def tier(self) -> Tier:
        return self.inner.tier

    @property
    def budget(self) -> int | None:
        return self.inner.budget

    @property
    def comparator(self) -> Comparator:
        return self.inner.comparator

    @property
    def recorded_key(self) -> str:
        return self.inner.recorded_key

    @property
    def past(self) -> Past:
        return self.inner.past

    @property
    def runs(self) -> int:
        return self.inner.runs

    @property
    def made(self) -> int:
        return self.inner.made

    @property
    def saved(self) -> int:
        return self.inner.saved

    @property
    def blind(self) -> Sequence[tuple[str, str]]:
        return self.inner.blind

    @property
    def wording(self) -> Mapping[frozenset[Removal], Sequence[str]]:
        return self.inner.wording

    def use(self, comparator: Comparator) -> None:
        self.inner.use(comparator)

    def removable(self, removal: Removal) -> str | None:
        return None

    def cassette_ok(self) -> bool:
        return self.inner.cassette_ok()

    def rerun(self, removals: Sequence[Removal], seed: int, *, live: bool = False,
              what: str = "") -> Rerun:
        drop = {int(r.key) for r in removals}
        if not drop:
            return self.inner.rerun((), seed, live=live, what=what)
        self.inner.edit = TextEdit(old=self.text,
                                   new=without_units(self.text, self.units, drop))
        try:
            return self.inner.rerun(self.held, seed, what=what)
        finally:
            self.inner.edit = None


@dataclass(slots=True)
class _Hunt:
    cut: _Cut
    screen_seeds: int
    seen: dict[frozenset[int], bool] = field(default_factory=dict)

    def changed(self, drop: frozenset[int]) -> bool:
        """A screen: does cutting ``drop`` change the value in most answered trials?"""
        if drop in self.seen:
            return self.seen[drop]
        past = self.cut.past
        flips = same = 0
        removals = [Removal("piece", str(i)) for i in sorted(drop)]
        for i in range(self.screen_seeds):
            got = self.cut.rerun(removals, SCREEN_SEED0 + 10 * len(self.seen) + i,
                                 what=f"sentences: {len(drop)} cut")
            flips += _flip(past, got)
            same += got.run != "broke" and not _flip(past, got)
        self.seen[drop] = flips > same
        return self.seen[drop]

    def minimize(self, group: list[int], held: frozenset[int]) -> frozenset[int]:
        """A subset of ``group`` whose cut (with ``held``) changes the value (ddmin)."""
        if len(group) == 1:
            return frozenset(group)
        mid = (len(group) + 1) // 2
        a, b = group[:mid], group[mid:]
        if self.changed(held | frozenset(a)):
            return self.minimize(a, held)
        if self.changed(held | frozenset(b)):
            return self.minimize(b, held)
        from_a = self.minimize(a, held | frozenset(b))
        return from_a | self.minimize(b, held | from_a)

    def minimal(self, found: frozenset[int]) -> frozenset[int]:
        """``found`` without any sentence whose return keeps the change."""
        for i in sorted(found):
            if len(found) > 1 and self.changed(found - {i}):
                found = found - {i}
        return found

    def sets(self, units: Sequence[Unit]) -> list[frozenset[int]]:
        """The sets found: the first by halves (the whole piece is known to matter), then
        one in what is left, while what is left still changes the value."""
        rest = frozenset(u.index for u in units)
        out: list[frozenset[int]] = []
        while rest and len(out) < MAX_SETS:
            if out and not self.changed(rest):
                break
            found = self.minimal(self.minimize(sorted(rest), frozenset()))
            if not self.changed(found):  # the halves never showed a change: nothing here
                break
            out.append(found)
            rest = rest - found
        return out


def _flip(past: Past, got: Rerun) -> bool:
    """A trial whose answer has another value (not lost, not re-worded)."""
    return got.run == "changed" and effect(past.answer, got.answer) == "value"


def _text_of(rr: Rerunner | Resender, removal: Removal) -> str | None:
    """The piece's text as the requests carry it, or ``None`` when it has none to cut."""
    if isinstance(rr, Resender):
        piece = next((p for p in rr.rec.pieces if p.id == removal.key), None)
        if piece is None or piece.kind == "tool":
            return None
        msgs = rr.rec.request.messages
        if piece.kind == "message":
            return msgs[int(piece.at[0])].content
        if piece.kind == "exchange":
            return next((m.content for m in msgs if m.role == "tool"
                         and m.tool_call_id == piece.at[0]), None)
        return piece.text
    past = rr.past
    if removal.what == "injection":
        landed = [e for e in rr.events if isinstance(e, ContextInjected)
                  and e.injection_id == removal.key and e.slot != "tools" and e.raw_content]
        here = [e for e in landed if e.step_id == past.explained.step_id] or landed
        return here[-1].raw_content if here else None
    if removal.what == "tool":
        read = set(past.explained.reads)
        results = {e.result for e in rr.events if isinstance(e, ToolEnd)
                   and e.tool_name == removal.key and e.tool_call_id in read}
        return next(iter(results)) if len(results) == 1 else None
    if removal.what == "message":
        return next((m.content for m in past.history if str(m.index) == removal.key), None)
    return None


def _in_requests(rr: Rerunner | Resender, text: str) -> bool:
    """The recorded requests hold ``text`` verbatim (so cutting from it reaches the model)."""
    if isinstance(rr, Resender):
        return TextEdit(old=text, new="").found(rr.rec.request)
    for call in rr.past.calls:
        try:
            body = json.loads(call.start.request_ref or "")
        except ValueError:
            continue
        texts = [str(body.get("system") or "")] + [
            str(m.get("content") or "") for m in body.get("messages") or ()
            if isinstance(m, dict)] if isinstance(body, dict) else []
        if any(text in t for t in texts):
            return True
    return False


def _targets(r: WhyReport, result: SearchResult) -> list[_Target]:
    """The confirmed pieces the headline names as root causes, each with the removals its
    test held out (the other members of a set it only mattered in)."""
    roots = [s for s in r.suspects if s.role == "root" and s.verdict == "confirmed"]
    by_text = {x.describe(): (x, f) for f in result.findings for x in f.removals}
    out: list[_Target] = []
    for s in roots:
        members = [m for m in r.suspects if s.kind == "set" and m.kind != "set"
                   and m.id in (s.ids or ())] or [s]
        for m in members:
            hit = by_text.get(m.removal or "")
            if hit is not None:
                out.append(_Target(suspect=m, removal=hit[0], held=_held(*hit)))
    return out


def _held(removal: Removal, f: Finding) -> tuple[Removal, ...]:
    own = dict(f.alone).get(removal)
    if len(f.removals) == 1 or (own is not None and own.verdict == "confirmed"):
        return ()
    return tuple(x for x in f.removals if x != removal)


def _span(u: Unit, lines: int) -> Span:
    return Span(where=u.where(lines), start=u.start, end=u.end, text=u.text)


def _experiment(what: str, test: Ablation) -> Experiment:
    return Experiment(removal=what, runs=test.tally.runs, flips=test.tally.changed,
                      broke=test.tally.broke, verdict=test.verdict)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ask:
    base: Tally
    seeds: int
    alpha: float
    rng: random.Random


def _piece(rr: Rerunner | Resender, t: _Target, ask: _Ask) -> SentenceClaim | None:
    """Search one piece's sentences (module doc); ``None`` when it has no text to cut (a
    skill, a tool definition, a redacted piece)."""
    s = t.suspect
    text = _text_of(rr, t.removal)
    if not text:
        return None
    blank = SentenceClaim(piece=s.label, removal=s.removal or s.label, kind="unknown",
                          spans=(), text=text, units=0, experiments=(), trials=0,
                          model_calls=0)
    units = segment(text)
    lines = len(text.splitlines()) or 1
    blank = replace(blank, units=len(units))
    if len(units) < 2:
        return replace(blank, kind="whole", spans=tuple(_span(u, lines) for u in units),
                       note="one sentence: the piece's own test names it")
    if not _in_requests(rr, text):
        return replace(blank, note="its text is not verbatim in the recorded requests, so "
                                   "no sentence of it can be cut")
    runs, made = rr.runs, rr.made
    cut = _Cut(rr, text, units, t.held)
    hunt = _Hunt(cut=cut, screen_seeds=1 if ask.base.changed == 0 else 3)
    try:
        claim = _named(hunt, units, lines, ask)
    except BudgetSpent as exc:
        claim = replace(blank, note=f"{exc} before a sentence was confirmed (a larger "
                                    "--budget finishes it; --no-sentences skips this step)")
    return replace(claim, piece=s.label, removal=s.removal or s.label, text=text,
                   units=len(units),
                   trials=rr.runs - runs, model_calls=rr.made - made)


def _named(hunt: _Hunt, units: Sequence[Unit], lines: int, ask: _Ask) -> SentenceClaim:
    """The sets the screens found, each confirmed; the claim they support."""
    by = {u.index: u for u in units}
    alpha = ask.alpha / len(units)
    tested: list[tuple[frozenset[int], Ablation]] = []
    exps: list[Experiment] = []
    for found in hunt.sets(units):
        removals = [Removal("piece", str(i)) for i in sorted(found)]
        test = _confirm(hunt.cut, ask.base, removals, ask.seeds, alpha, ask.rng)[0]
        what = " + ".join(by[i].where(lines) for i in sorted(found)) + " cut"
        exps.append(_experiment(what, test))
        tested.append((found, test))
        if test.verdict == "confirmed" and len(found) > 1:
            for i in sorted(found):
                alone = _confirm(hunt.cut, ask.base, [Removal("piece", str(i))], ask.seeds,
                                 alpha, ask.rng)[0]
                exps.append(_experiment(f"{by[i].where(lines)} cut", alone))
    held = [f for f, test in tested if test.verdict == "confirmed"]
    spans = tuple(_span(by[i], lines) for f in held for i in sorted(f))
    blank = SentenceClaim(piece="", removal="", kind="unknown", spans=(), text="",
                          units=len(units),
                          experiments=tuple(exps), trials=0, model_calls=0)
    if not held:
        why = ("no cut of its sentences changed the value in the screens" if not tested else
               "the sentences the screens isolated did not hold in their confirming test")
        return replace(blank, note=f"{why}; the cause may need the piece whole")
    if len(held) > 1:
        return replace(blank, kind="each", spans=spans)
    return replace(blank, kind="together" if len(held[0]) > 1 else "sentence", spans=spans)


def attribute(r: WhyReport, rr: Trial, result: SearchResult | None, *,
              seeds: int, alpha: float) -> WhyReport:
    """``r`` with the sentences of each confirmed root piece named (module doc), the
    claims and the trial counts grown by what that took."""
    if result is None or r.baseline is None or r.conclusion != "confirmed" or \
            not isinstance(rr, Rerunner | Resender):
        return r
    b = r.baseline
    ask = _Ask(base=Tally(changed=b.changed, same=b.same, broke=b.broke), seeds=seeds,
               alpha=alpha, rng=random.Random(f"{r.run_id}/sentences"))
    found = tuple(c for c in (_piece(rr, t, ask) for t in _targets(r, result))
                  if c is not None)
    if not found:
        return r
    claims = tuple(_claim(c) for c in found if c.kind in ("sentence", "each", "together"))
    made, saved = rr.made, rr.saved
    return replace(r, sentences=found, claims=(*r.claims, *claims), reruns=rr.runs,
                   model_calls=replace(r.model_calls, made=made, saved=saved))


def _claim(c: SentenceClaim) -> Claim:
    return Claim(kind="sentence", names=tuple(f"{s.where} of {c.piece}: “{s.text}”"
                                              for s in c.spans), experiments=c.experiments)

