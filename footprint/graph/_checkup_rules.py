"""Check-up rules over entry conditions: shadowing, examples, never-routes (§2.10).

Examples and never-routes phrases are run against a cold context (iteration
1, no cursor, no tool results): the same walk a first message takes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from footprint.graph._matchers import All, Intent, Keywords, Regex, compile_matcher
from footprint.graph._problems import GraphProblem
from footprint.injection._types import InjectionContext

if TYPE_CHECKING:
    from footprint.graph._declare import Entry, SkillGraph

__all__ = ["example_problems", "never_route_problems", "shadowing_problems"]

Claim = Literal["hit", "miss", "raise", "no-rule"]


def _warning(code: str, message: str, **where: str | None) -> GraphProblem:
    return GraphProblem(kind="warning", code=code, message=message, **where)


def _error(code: str, message: str, **where: str | None) -> GraphProblem:
    return GraphProblem(kind="error", code=code, message=message, **where)


def _is_data(entry: Entry) -> bool:
    return isinstance(entry.match, Regex | Keywords | All)


def _is_rule(entry: Entry) -> bool:
    return entry.when is not None or _is_data(entry)


# ── shadowing between data matchers ───────────────────────────────────────


def _regex_key(m: Regex) -> tuple[str, int]:
    p = m.pattern
    return (p.pattern, p.flags & ~re.UNICODE) if isinstance(p, re.Pattern) else (p, 0)


def _covers(earlier: Regex | Keywords, later: Regex | Keywords) -> bool:
    """Every text ``later`` matches, ``earlier`` matches too (as far as we can prove)."""
    if isinstance(earlier, Regex) and isinstance(later, Regex):
        return _regex_key(earlier) == _regex_key(later)
    if isinstance(earlier, Keywords) and isinstance(later, Keywords):
        return {w.lower() for w in later.words} <= {w.lower() for w in earlier.words}
    return False


def _members(m: All) -> list[Regex | Keywords]:
    out: list[Regex | Keywords] = []
    for member in m.members:
        out.extend(_members(member) if isinstance(member, All) else [member])
    return out


def _conjuncts(m: object) -> list[Regex | Keywords] | None:
    """A data matcher as the members that must all match (None for anything else)."""
    if isinstance(m, All):
        return _members(m)
    return [m] if isinstance(m, Regex | Keywords) else None


def _shadows(earlier: object, later: object) -> bool:
    """Every message ``later`` matches, ``earlier`` matches too (as far as we can prove).

    Both are read as conjunctions: ``earlier`` holds whenever each of its
    members covers some member of ``later`` — so identical ``All`` rules, or a
    later ``All`` that only adds a constraint, are shadowed.
    """
    mine, theirs = _conjuncts(earlier), _conjuncts(later)
    if not mine or not theirs:
        return False
    return all(any(_covers(e, t) for t in theirs) for e in mine)


def _shared_keywords(earlier: object, later: object) -> list[str]:
    if not (isinstance(earlier, Keywords) and isinstance(later, Keywords)):
        return []
    mine = {w.lower() for w in earlier.words}
    return [w for w in later.words if w.lower() in mine]


def shadowing_problems(graph: SkillGraph) -> list[GraphProblem]:
    """``rules-shadowed-by-order`` / ``overlapping-rules`` among data-matcher entries."""
    router = graph.router
    if router is not None and router.kind != "classify":
        return []
    data = [e for e in graph.entries if _is_data(e)]
    found: list[GraphProblem] = []
    for j, later in enumerate(data):
        for earlier in data[:j]:
            if _shadows(earlier.match, later.match):
                found.append(_warning(
                    "rules-shadowed-by-order",
                    f"entry {later.skill_id!r} ({later.match!r}) can never win: every "
                    f"message it matches is claimed first by {earlier.skill_id!r} "
                    f"({earlier.match!r}). Declare it first or narrow the earlier rule.",
                    skill=later.skill_id, from_skill=earlier.skill_id,
                ))
                break
            if shared := _shared_keywords(earlier.match, later.match):
                found.append(_warning(
                    "overlapping-rules",
                    f"entries {earlier.skill_id!r} and {later.skill_id!r} share keyword(s) "
                    f"{shared!r}; a message with them goes to {earlier.skill_id!r} by "
                    "declaration order. Make the keyword lists disjoint if that is wrong.",
                    skill=later.skill_id, from_skill=earlier.skill_id,
                ))
    return found


# ── running a text through the rules ──────────────────────────────────────


def _claim(entry: Entry, text: str) -> tuple[Claim, str | None]:
    if entry.when is not None:
        try:
            return ("hit" if entry.when(InjectionContext(iteration=1, user_message=text))
                    else "miss"), None
        except Exception as exc:  # a raising rule is a finding, never a crash
            return "raise", f"{type(exc).__name__}: {exc}"
    if _is_data(entry) and entry.match is not None:
        matcher = entry.matcher or compile_matcher(entry.match, where=f"entry {entry.skill_id}")
        return ("hit" if matcher.search(text) is not None else "miss"), None
    return "no-rule", None


def _first_claimant(entries: tuple[Entry, ...], text: str) -> Entry | None:
    for e in entries:
        if _is_rule(e) and _claim(e, text)[0] == "hit":
            return e
    return None


def _example_problem(graph: SkillGraph, index: int, ex: str) -> GraphProblem | None:
    entry = graph.entries[index]
    sid = entry.skill_id
    claim, error = _claim(entry, ex)
    if claim in ("miss", "raise"):
        bad = claim == "raise" or _is_data(entry)
        why = f"its rule raised {error}" if claim == "raise" else "its own rule does not match it"
        return GraphProblem(
            kind="error" if bad else "warning", code="example-misses-own-rule",
            message=f"example {ex!r} of entry {sid!r}: {why}. Fix the rule or the example.",
            skill=sid, example=ex,
        )
    earlier = graph.entries[:index]
    if (winner := _first_claimant(earlier, ex)) is not None:
        return _error(
            "example-shadowed-by-earlier",
            f"example {ex!r} of entry {sid!r} is claimed first by the earlier entry "
            f"{winner.skill_id!r}, so it routes there. Reorder the entries or narrow "
            f"{winner.skill_id!r}'s rule.",
            skill=sid, from_skill=winner.skill_id, to=sid, example=ex,
        )
    default = next((e for e in earlier if not e.conditional), None)
    if default is not None and not graph.is_exclusive:
        return _warning(
            "example-shadowed-by-default",
            f"example {ex!r} of entry {sid!r} would first meet the unconditional entry "
            f"{default.skill_id!r}, which wins the cold start. Put {sid!r} before it.",
            skill=sid, from_skill=default.skill_id, example=ex,
        )
    if claim == "no-rule" and _first_claimant(graph.entries, ex) is None:
        return _warning(
            "example-unclaimed",
            f"example {ex!r} sits on entry {sid!r}, which has no rule of its own, and no "
            "rule claims it: it reaches the skill only as a default. Give the entry a "
            "match or move the example to the rule meant to claim it.",
            skill=sid, example=ex,
        )
    return None


def example_problems(graph: SkillGraph) -> tuple[list[GraphProblem], bool]:
    """Every rule's ``examples`` against a cold ctx; the bool says any were checked."""
    found: list[GraphProblem] = []
    checked = False
    for index, entry in enumerate(graph.entries):
        if isinstance(entry.match, Intent):
            continue
        for ex in entry.examples:
            checked = True
            if (problem := _example_problem(graph, index, ex)) is not None:
                found.append(problem)
    return found, checked


# ── never-routes ──────────────────────────────────────────────────────────


def _normalise(text: str) -> str:
    return " ".join(text.strip().lower().split())


def _phrase_problems(graph: SkillGraph, phrase: str) -> list[GraphProblem]:
    found: list[GraphProblem] = []
    winner = _first_claimant(graph.entries, phrase)
    if winner is not None:
        found.append(_error(
            "never-routes-claimed",
            f"never_routes phrase {phrase!r} is claimed by entry {winner.skill_id!r}; a "
            "message like it would route there. Narrow that rule or drop the phrase.",
            skill=winner.skill_id, example=phrase,
        ))
    default = next((e for e in graph.entries if not e.conditional), None)
    if winner is None and default is not None and not graph.is_exclusive:
        found.append(_warning(
            "never-routes-by-default",
            f"never_routes phrase {phrase!r} is claimed by no rule, but the unconditional "
            f"entry {default.skill_id!r} takes every cold start, so it routes there anyway.",
            skill=default.skill_id, example=phrase,
        ))
    for e in graph.entries:
        if any(_normalise(ex) == _normalise(phrase) for ex in e.examples):
            found.append(_error(
                "never-routes-contradicts-example",
                f"never_routes phrase {phrase!r} is also an example of entry "
                f"{e.skill_id!r}: the graph says both 'route it' and 'never route it'. "
                "Drop one of them.",
                skill=e.skill_id, example=phrase,
            ))
    return found


def never_route_problems(graph: SkillGraph) -> tuple[list[GraphProblem], bool]:
    """Each ``never_routes`` phrase that some rule (or the default) would route."""
    found = [p for phrase in graph.never_routes for p in _phrase_problems(graph, phrase)]
    return found, bool(graph.never_routes)
