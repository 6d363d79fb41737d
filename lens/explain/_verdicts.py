"""From candidates and search results to ranked suspects and one concluding sentence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from lens.explain._candidates import Candidate, Removal
from lens.explain._outcome import changes, effect, wording
from lens.explain._path import Order, joint_roots
from lens.explain._report import (
    Claim,
    ClaimKind,
    Effect,
    Experiment,
    Suspect,
    WhyReport,
    tier_of,
)
from lens.explain._search import Finding, SearchResult
from lens.explain._stats import Ablation
from lens.explain._tier import Tier, Words
from lens.playback._stream import clip

__all__ = ["Seen", "conclude", "suspects_of"]

_ORDER = {"confirmed": 0, "inconclusive": 1, "broke": 2, "untested": 3, "not-confirmed": 4}


@dataclass(frozen=True, slots=True, kw_only=True)
class Seen:
    """What the re-runs showed beyond their tallies: the recorded answer, whether answers
    are compared with ``--expect`` (a change is then a fix), and each removal's re-run
    texts that changed only in wording; ``words``: the tier's words for its trials."""

    answer: str
    expect: bool = False
    worded: Mapping[frozenset[Removal], Sequence[str]] = field(default_factory=dict)
    words: Words = Tier.RERUN.words

    def wording(self, removals: Sequence[Removal]) -> tuple[str, ...]:
        texts = self.worded.get(frozenset(removals), ())
        return tuple(dict.fromkeys(w for t in texts[:3] for w in wording(self.answer, t)))[:2]


def _effect(seen: Seen, answers: Sequence[str]) -> Effect | None:
    """A confirmed removal's effect over its changed answers: ``lost`` when most lost the
    answer, ``wording`` when none gave another value, else ``value``."""
    if not answers:
        return None
    kinds = [effect(seen.answer, got) for got in answers]
    if 2 * kinds.count("lost") > len(kinds):
        return "lost"
    return "value" if "value" in kinds else "wording"


def _tested(s: Suspect, a: Ablation, removal: str, note: str = "",
            answers: Sequence[str] = (), seen: Seen | None = None) -> Suspect:
    t = a.tally
    answer = seen.answer if seen is not None else ""
    diff = changes(answer, answers) if answers else ()
    return replace(s, verdict=a.verdict, runs=t.runs, flips=t.changed, broke=t.broke,
                   confidence=a.confidence, p_value=round(a.p_value, 6), removal=removal,
                   note="; ".join(x for x in (a.note, note) if x), changes=diff,
                   effect=_effect(seen, answers) if seen is not None and a.verdict ==
                   "confirmed" else None)


def _plain(c: Candidate, refused: Mapping[Removal, str]) -> Suspect:
    why_not = refused.get(c.removal) if c.removal is not None else None
    return Suspect(rank=0, kind=c.kind, id=c.id, ids=None, label=c.label, flavor=c.flavor,
                   step_id=c.step_id, score=c.score, chain=c.chain, excerpt=c.excerpt,
                   removable=c.removal is not None and why_not is None,
                   removal=c.removal.describe() if c.removal is not None else None,
                   note=f"evidence only: {why_not or c.evidence_only}"
                   if (why_not or c.evidence_only) else "", redacted=c.redacted,
                   calls=c.calls if len(c.calls) > 1 else ())


def _with_result(s: Suspect, r: Removal | None, result: SearchResult,
                 singles: Mapping[Removal, Finding], alone: Mapping[Removal, tuple[Ablation, str]],
                 seen: Seen) -> Suspect:
    if r is None or not s.removable:
        return s
    s = replace(s, wording=seen.wording((r,)))
    how = r.describe()
    if r in singles:
        f = singles[r]
        s = replace(s, paired_runs=f.paired.runs, paired_same=f.paired.same,
                    rerun_calls=f.calls)
        return _tested(s, f.test, how, answers=f.answers, seen=seen)
    if r in alone:
        test, note = alone[r]
        return _tested(s, test, how, note)
    isolated = next((f for f in result.isolated if r in f), None)
    if isolated is not None:
        spent = result.spent.get(r, 0)
        with_ = f" (with {' + '.join(x.key for x in isolated if x != r)})" \
            if len(isolated) > 1 else ""
        return replace(s, verdict="untested", removal=how,
                       note=f"isolated by the screens{with_} in {spent} "
                            f"{seen.words.trials}; the budget stopped before its confirming "
                            "test ended")
    if r in result.unjudged:
        return replace(s, verdict="inconclusive", removal=how, note=result.unjudged_why)
    if r in result.broke:
        return replace(s, verdict="broke", removal=how,
                       note=f"every {seen.words.trial} without it raised or never answered")
    if r in result.cleared:
        return replace(s, verdict="not-confirmed", removal=how,
                       note="removed alone in a screen: the outcome held")
    return replace(s, verdict="untested", removal=how, note="the search stopped before it"
                   if result.stopped else "never removed alone")


def _sets(result: SearchResult, cands: Sequence[Candidate], seen: Seen) -> list[Suspect]:
    out: list[Suspect] = []
    for f in result.findings:
        if len(f.removals) < 2:
            continue
        members = [next((c for c in cands if c.removal == r), None) for r in f.removals]
        ids = tuple(m.id if m is not None else r.key for m, r in zip(members, f.removals,
                                                                    strict=True))
        weak = f.test.verdict == "confirmed" and all(  # each alone tested, none flipped
            a.verdict == "not-confirmed" and a.tally.runs > 0 for _, a in f.alone)
        base = Suspect(rank=0, kind="set", id=None, ids=ids,
                       label="set: " + " + ".join(_member_labels(f.removals, cands)),
                       flavor=None, step_id=members[0].step_id if members[0] else "",
                       score=None, chain=tuple(f"member: {r.describe()}" for r in f.removals),
                       excerpt="", removable=True)
        note = "each alone is not enough: removing any one of them left the outcome" \
            if weak else ""
        base = replace(base, wording=seen.wording(f.removals), paired_runs=f.paired.runs,
                       paired_same=f.paired.same, minimal=_shown_minimal(f),
                       rerun_calls=f.calls,
                       without=tuple(Experiment(
                           removal=" + ".join(x.describe() for x in f.removals if x != r),
                           runs=t.runs, flips=t.changed, broke=t.broke, verdict=None)
                           for r, t in f.without))
        out.append(_tested(base, f.test, " + ".join(r.describe() for r in f.removals), note,
                           f.answers, seen))
    return out


def _shown_minimal(f: Finding) -> bool | None:
    """Is the confirmed set minimal, each member needed in it? A pair: the other member's
    own test held (removing the set but it kept the outcome); three or more: the set but
    each member, removed, kept it (``Finding.without``). ``None``: not shown."""
    if f.test.verdict != "confirmed":
        return None
    if len(f.removals) == 2:
        tests = [a for _, a in f.alone]
        if any(a.verdict == "confirmed" for a in tests):
            return False
        return True if all(a.verdict == "not-confirmed" and a.tally.runs for a in tests) \
            else None
    if any(2 * t.changed > t.answered for _, t in f.without):
        return False
    if len(f.without) == len(f.removals) and all(
            t.answered and 2 * t.same > t.answered for _, t in f.without):
        return True
    return None


def _member_labels(removals: Sequence[Removal], cands: Sequence[Candidate]) -> list[str]:
    """Each removal of a set named as its own suspect is (``tool promo_lookup #call_1``,
    never the bare call id)."""
    return [next((c.label for c in cands if c.removal == r), r.describe()) for r in removals]


def _member_note(f: Finding, cands: Sequence[Candidate]) -> str:
    keys = " + ".join(_member_labels(f.removals, cands))
    if f.test.verdict == "confirmed":
        return f"part of a culprit set: {keys}"
    return f"not tested alone: the set the screens flagged ({keys}) did not hold " \
           f"({f.test.verdict})"


def suspects_of(cands: Sequence[Candidate], result: SearchResult | None,
                refused: Mapping[Removal, str], seen: Seen | str) -> tuple[Suspect, ...]:
    """One suspect per candidate (plus one per culprit set), ranked: verdict, then overlap."""
    seen = Seen(answer=seen) if isinstance(seen, str) else seen
    plain = [_plain(c, refused) for c in cands]
    if result is not None:
        singles = {f.removals[0]: f for f in result.findings if len(f.removals) == 1}
        alone = {r: (a, _member_note(f, cands)) for f in result.findings for r, a in f.alone}
        plain = [_with_result(s, c.removal, result, singles, alone, seen)
                 for s, c in zip(plain, cands, strict=True)]
        plain = _sets(result, cands, seen) + plain
    ranked = sorted(plain, key=lambda s: (_ORDER.get(s.verdict or "", 5), s.score is None,
                                          -(s.score or 0.0)))
    return tuple(replace(s, rank=i) for i, s in enumerate(ranked, start=1))


def _what(r: WhyReport, s: Suspect) -> str:
    """A suspect as the headline names it; a set by its members' own labels."""
    if s.kind != "set":
        return s.label
    labels = {x.id: x.label for x in r.suspects if x.id is not None and x.kind != "set"}
    return " and ".join(labels.get(i, i) for i in s.ids or ())


def _confirmed_text(r: WhyReport, s: Suspect) -> str:
    together = " together" if s.kind == "set" else ""
    alone = "; each alone is not enough" if s.kind == "set" and s.note else ""
    if s.kind == "set" and s.minimal is not True:
        alone += ("; not minimal: the set without one of them still changes it"
                  if s.minimal is False else "; not shown minimal (each member's removal "
                  "from the set was not tested)")
    to = f" ({', '.join(s.changes[:3])})" if s.changes else ""
    conf = f"{100 * (s.confidence or 0):.2f}%"
    return (f"removing {_what(r, s)}{together} changes the answer{to} in {s.flips}/"
            f"{s.runs - s.broke} {tier_of(r).words.trials}, confidence {conf} against a "
            f"baseline of "
            f"{_base(r, s)}{alone}")


def _base(r: WhyReport, s: Suspect | None = None) -> str:
    """``12/12`` live trials of the unchanged agent, ``+ 2/2 interleaved`` with the test."""
    b = r.baseline
    text = f"{b.same}/{b.runs}" if b is not None else "0/0"
    if s is not None and s.paired_runs:
        text += f" + {s.paired_same}/{s.paired_runs} interleaved"
    return text


def _joint_text(r: WhyReport, roots: Sequence[Suspect]) -> str:
    """One root's sentence, or a conjunction's (roots that change one value together)."""
    if len(roots) == 1:
        return _confirmed_text(r, roots[0])
    changed = tuple(dict.fromkeys(c for s in roots for c in s.changes))
    to = f" ({', '.join(changed[:3])})" if changed else ""
    low = min(s.confidence or 0 for s in roots)
    return (f"removing any one of {', '.join(_what(r, s) for s in roots)} changes the "
            f"answer{to}: each is needed (a conjunction); confidence ≥ {100 * low:.2f}% "
            f"each against a baseline of {_base(r)}")


def _roots_text(r: WhyReport, order: Order) -> str:
    groups = joint_roots(order.roots)
    if len(groups) == 1:
        text = _joint_text(r, groups[0])
    else:
        text = "; ".join(_joint_text(r, g) for g in groups) + (
            f" — {len(groups)} independent causes, each of its own value")
    if order.outside:
        text = (f"{text}; the earliest removable link: what made {order.path[0].split()[0]} "
                "choose it is outside what can be removed (the base prompt, the tool itself "
                "or the model)")
    return text


def _not_found(r: WhyReport, result: SearchResult | None) -> str:
    removable = [s for s in r.suspects if s.removable and s.kind != "set"]
    if result is None:
        return next((f.split(":", 1)[1].strip() for f in r.flags
                     if f.startswith("baseline-unreproduced")),
                    f"no {tier_of(r).words.trial} could be compared")
    if result.stopped:
        return (f"{result.stopped} before the search ended; not tested: "
                + (", ".join(r.untested) or "none"))
    if not removable:
        return "no candidate could be removed from this agent; the evidence is listed below"
    if result.broke and not result.cleared:
        return f"every removal made the {tier_of(r).words.trials} crash or never answer (broke)"
    if r.comparator_mode in ("expect", "judge", "label"):
        return (f"removing each of the {len(removable)} removable candidates alone, and all of "
                f"them together, never gave the outcome asked for ({r.comparator}); the fix "
                "is among the evidence-only candidates below, not in the recording, or not "
                "what the comparator looks for")
    return (f"removing each of the {len(removable)} removable candidates alone, and all of them "
            "together, left the outcome unchanged; the cause is among the evidence-only "
            "candidates below, or not in the recording")


def conclude(r: WhyReport, result: SearchResult | None,
             order: Order | None = None) -> WhyReport:
    """Set the report's conclusion and its one sentence (the root causes first)."""
    if r.mode == "CORRELATIONAL":
        reason = next((f for f in r.flags if f.startswith("conversation-not-restored")), None)
        text = (f"{len(r.suspects)} candidates upstream of the answer, ranked by "
                "resemblance to the answer; none was tested" + (
                    "" if reason else " (pass --agent to re-run without them)"))
        return replace(r, conclusion="correlational", conclusion_text=text)
    if order is not None and (order.roots or order.context):
        r = replace(r, root_causes=tuple(_what(r, s) for s in order.roots), path=order.path,
                    necessary=order.necessary,
                    claims=tuple(_claim(r, g) for g in joint_roots(order.roots)) + tuple(
                        Claim(kind="user-said", names=(s.label,), experiments=(_experiment(s),))
                        for s in order.context),
                    user_said=tuple(s.excerpt for s in order.context))
        text = _roots_text(r, order) + _said(r, order) if order.roots else _said_only(r, order)
        return replace(r, conclusion="confirmed", conclusion_text=text + _unscreened(result))
    if order is not None:
        r = replace(r, necessary=order.necessary)
    budget = _budget(r, result)
    if budget is not None:
        return replace(r, conclusion="inconclusive", conclusion_text=budget)
    if r.necessary:
        return replace(r, conclusion="cause-not-found", conclusion_text=_only_needed(r))
    inconclusive = _inconclusive(r)
    if inconclusive is not None:
        return replace(r, conclusion="inconclusive", conclusion_text=inconclusive)
    broke = [s for s in r.suspects if s.verdict == "broke"]
    if broke and not any(s.verdict == "not-confirmed" for s in r.suspects):
        return replace(r, conclusion="broke", conclusion_text=_not_found(r, result))
    return replace(r, conclusion="cause-not-found",
                   conclusion_text="cause not found: " + _not_found(r, result))


def _said(r: WhyReport, order: Order) -> str:
    """``; because the user said “I'm a student”`` (their message gates the root), or ``""``."""
    if not order.context:
        return ""
    return "; because the user said " + " and ".join(f"“{q}”" for q in r.user_said) + (
        f" (without {'it' if len(r.user_said) == 1 else 'each'} the answer changes too: the "
        "user's own words, context of the root, not a cause)")


def _said_only(r: WhyReport, order: Order) -> str:
    """No piece of the agent changed the value, only the user's own words did."""
    s = order.context[0]
    to = f" ({', '.join(s.changes[:3])})" if s.changes else ""
    return ("because the user said " + " and ".join(f"“{q}”" for q in r.user_said)
            + f": removing {'that message' if len(r.user_said) == 1 else 'each message'} "
            f"changes the answer{to} in {s.flips}/{s.runs - s.broke} "
            f"{tier_of(r).words.trials}; no piece of the agent was shown to cause it (the "
            "user's own words are context, never a root cause)")


def _inconclusive(r: WhyReport) -> str | None:
    """Why nothing was confirmed when a removal (or the baseline itself) varied, or ``None``."""
    w = tier_of(r).words
    vague = [s for s in r.suspects if s.verdict == "inconclusive" and s.runs > 0]
    unstable = r.baseline is not None and not r.baseline.stable and r.baseline.same > 0
    if not (vague or unstable or any(s.verdict == "inconclusive" for s in r.suspects)):
        return None
    who = (f"; closest: {clip(vague[0].label, 50)} "
           f"({vague[0].note or f'some {w.trials} changed'})") if vague else ""
    why = (f"{w.unchanged}'s own answers vary across {w.trials}" if unstable
           else "some removals changed the outcome, but not at the required confidence")
    return why + who


def _experiment(s: Suspect) -> Experiment:
    return Experiment(removal=s.removal or s.label, runs=s.runs, flips=s.flips, broke=s.broke,
                      verdict=s.verdict)


def _claim(r: WhyReport, group: Sequence[Suspect]) -> Claim:
    """A headline sentence with its experiments: each member's own removal; for a set, its
    joint removal, then each member's own (tested alone only once the set held)."""
    out: list[Experiment] = []
    names: list[str] = []
    for s in group:
        out.append(_experiment(s))
        members = [m for m in r.suspects
                   if s.kind == "set" and m.kind != "set" and m.id in (s.ids or ())]
        out += [_experiment(m) for m in members]
        names += [m.label for m in members] or [_what(r, s)]
    kind: ClaimKind = "conjunction" if len(group) > 1 else "cause"
    one = group[0]
    if len(group) == 1 and one.kind == "set":
        alone = out[1:]
        kind = "redundant-set" if alone and all(
            e.verdict == "not-confirmed" and e.runs for e in alone) else "set"
        return Claim(kind=kind, names=tuple(dict.fromkeys(names)),
                     experiments=tuple(dict.fromkeys(out)), minimal=one.minimal,
                     without=one.without)
    return Claim(kind=kind, names=tuple(dict.fromkeys(names)),
                 experiments=tuple(dict.fromkeys(out)))


def _unscreened(result: SearchResult | None) -> str:
    """After a confirmed cause, what the budget left unscreened (``""`` when nothing)."""
    if result is None or not result.stopped or not (result.untested or result.isolated):
        return ""
    more = f"--budget {result.more}" if result.more else "a larger --budget"
    left = len(result.untested) + sum(len(f) for f in result.isolated)
    return (f"; the budget stopped the search with {left} piece(s) not tested alone "
            f"(another cause among them is unknown; {more} would finish it)")


def _isolated(r: WhyReport, result: SearchResult, held: Sequence[Suspect]) -> list[str]:
    """Each set the screens isolated, as one item (``the set {A + B} (n re-runs)``): its
    members were isolated together, not each alone."""
    by_removal = {s.removal: s for s in held}
    trials = tier_of(r).words.trials
    out: list[str] = []
    for found in result.isolated:
        members = [by_removal[x.describe()] for x in found if x.describe() in by_removal]
        if not members:
            continue
        runs = max(result.spent.get(x, 0) for x in found)
        names = " + ".join(s.label for s in members)
        out.append(f"the set {{{names}}} ({runs} {trials})" if len(members) > 1
                   else f"{names} ({runs} {trials})")
    return out


def _budget(r: WhyReport, result: SearchResult | None) -> str | None:
    """``budget spent: …`` with what the screens isolated and what one more budget tests."""
    if result is None or not result.stopped or not (result.isolated or result.untested):
        return None
    held = [s for s in r.suspects if s.verdict == "untested"
            and s.note.startswith("isolated by the screens")]
    more = f"--budget {result.more}" if result.more else "a larger --budget"
    if held:
        found = _isolated(r, result, held) or [s.label for s in held]
        return (f"budget spent: the screens isolated {', '.join(found)} but the budget "
                f"stopped before the confirming test; {more} would test "
                + ("it" if len(found) == 1 else "them")
                + (f" and the {len(result.untested)} untested" if result.untested else ""))
    return (f"budget spent: {result.stopped} before the search ended; {more} would test "
            f"the {len(result.untested)} untested: " + ", ".join(r.untested[:10])
            + (f" and {len(r.untested) - 10} more" if len(r.untested) > 10 else ""))


def _only_needed(r: WhyReport) -> str:
    """No removal changed the value, some lost the answer: head with the earliest removable
    link (a guarded move first: its guard decided the route) and say the root is beyond."""
    needed = [s for s in r.suspects if s.role == "necessary"]
    guards = [(s, c) for s in needed for c in s.chain if c.startswith("guard on ")]
    lead, guard = guards[0] if guards else (needed[0], "")
    return ("cause not found: no removal gave the answer another value, so the root cause is "
            "outside what can be removed; the earliest removable link: "
            f"{lead.label} — without it the answer is lost (necessary)"
            + (f"; its {guard}" if guard else ""))
