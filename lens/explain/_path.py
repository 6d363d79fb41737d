"""Causal order: confirmed suspects as one path from the root cause(s) to the answer.

Mediation is read from the recorded causal past, never from word overlap:
a tool result is *downstream* of a confirmed piece when that piece was in
the prompt of a model call that chose the tool (the piece's ``reach`` holds
one of the result's ``chosen_by`` calls); a tool result is downstream of
another result when a call that read the first chose the second. The roots
are the confirmed value changes nothing confirmed is upstream of: every
member of a conjunction, the set of a redundant set. A root that is itself a
tool result is the *earliest removable link*: what made its call choose the
tool is outside what can be removed. Removals that only lose the answer
(``necessary``) or only change its wording (``wording``) are listed apart and
never lead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from lens.explain._candidates import Candidate
from lens.explain._report import Role, Suspect

__all__ = ["Order", "causal_order", "joint_roots"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Order:
    """The suspects ranked root first, with the path and what is only necessary."""

    suspects: tuple[Suspect, ...]
    roots: tuple[Suspect, ...]
    path: tuple[str, ...]
    necessary: tuple[str, ...]
    outside: bool
    """The roots are tool results: nothing removable upstream changed the call's choice."""


@dataclass(frozen=True, slots=True)
class _Link:
    suspect: Suspect
    reach: frozenset[str]
    chosen_by: tuple[str, ...]
    tool: bool


def _links(suspects: Sequence[Suspect], by_id: Mapping[str, Candidate]) -> list[_Link]:
    out: list[_Link] = []
    for s in suspects:
        members = [by_id[i] for i in (s.ids or (s.id,)) if i is not None and i in by_id]
        reach = frozenset(x for c in members for x in c.reach)
        chosen = tuple(dict.fromkeys(x for c in members for x in c.chosen_by))
        tool = bool(members) and all(c.kind == "tool_result" for c in members)
        out.append(_Link(s, reach, chosen, tool))
    return out


def _step_no(step: str) -> int:
    tail = step.rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else 1 << 30


def _downstream(up: _Link, down: _Link) -> bool:
    return up is not down and down.tool and bool(up.reach & set(down.chosen_by))


def _first(link: _Link) -> int:
    """The earliest model call a link acts at: the chooser of a result, else its reach."""
    return min(map(_step_no, link.chosen_by if link.tool else link.reach), default=1 << 30)


def _roots(value: Sequence[_Link]) -> tuple[list[_Link], list[_Link]]:
    """Roots and the other links on the path. A tool result nothing confirmed is upstream
    of leads only when no piece does (the earliest removable link); beside a piece it is
    an earlier link on the path (a result that, say, admitted the piece)."""
    mediators = [d for d in value if any(_downstream(u, d) for u in value)]
    roots = [v for v in value if v not in mediators]
    pieces = [r for r in roots if not r.tool]
    if pieces:
        return pieces, mediators + [r for r in roots if r.tool]
    if not roots and value:  # results feeding each other: the earliest chooser leads
        first = min(value, key=_first)
        roots, mediators = [first], [v for v in value if v is not first]
    return roots, mediators


def _carried(roots: Sequence[_Link], cands: Sequence[Candidate]) -> list[_Link]:
    """Results of tools a root injection carries: on the path, tested with their carrier."""
    heads = [r.suspect.label for r in roots if not r.tool]
    out: list[_Link] = []
    for c in cands:
        if c.carried_by and any(h.startswith(c.carried_by) for h in heads):
            s = Suspect(rank=0, kind="tool_result", id=c.id, ids=None, label=c.label,
                        flavor=c.flavor, step_id=c.step_id, score=c.score, chain=c.chain,
                        excerpt=c.excerpt, calls=c.calls)
            out.append(_Link(s, frozenset(c.reach), c.chosen_by, True))
    return out


def _hop(link: _Link) -> list[str]:
    s = link.suspect
    calls = s.calls or ((s.id,) if s.id else ())
    chooser = ", ".join(link.chosen_by) or "a call"
    return [f"{chooser} chose {s.flavor}", "result " + ", ".join(f"#{c}" for c in calls[:3])
            + (f" (+{len(calls) - 3})" if len(calls) > 3 else "")]


def _changed_values(s: Suspect) -> set[str]:
    """The recorded answer's values a suspect's removal changed (``150 EUR`` of
    ``150 EUR → 200 EUR``, whatever the new value; ``+x`` names no recorded value)."""
    return {c.split(" → ")[0] if " → " in c else c.removeprefix("-") for c in s.changes}


def joint_roots(roots: Sequence[Suspect]) -> list[list[Suspect]]:
    """Roots grouped by the values they change: roots whose removals change a value in
    common are one conjunction (each needed for that value); roots that change values of
    their own are independent causes. Roots whose changes are not named (the whole text
    changed) stay together, as the conservative reading."""
    groups: list[list[Suspect]] = []
    for s in roots:
        mine = _changed_values(s)
        joined = [g for g in groups if not mine or any(
            not x.changes or mine & _changed_values(x) for x in g)]
        merged = [s, *(x for g in joined for x in g)]
        groups = [g for g in groups if g not in joined] + [merged]
    order = {id(s): i for i, s in enumerate(roots)}
    for g in groups:
        g.sort(key=lambda s: order[id(s)])
    return sorted(groups, key=lambda g: order[id(g[0])])


def _path(roots: Sequence[_Link], links: Sequence[_Link], step: str) -> tuple[str, ...]:
    """The path in the order of the calls: a piece where it first acted, each result where
    it was chosen (a piece before the results chosen at its own first call). Independent
    causes are listed apart (``A · B``); a conjunction joined (``A + B``)."""
    head = [r for r in roots if not r.tool]
    items: list[tuple[int, int, list[str]]] = []
    if head:
        groups = joint_roots([r.suspect for r in head])
        items.append((min(_first(r) for r in head), 0,
                      [" · ".join(" + ".join(s.label for s in g) for g in groups)]))
    items += [(_first(m), 1, _hop(m)) for m in (*(r for r in roots if r.tool), *links)]
    out = [x for _, _, hop in sorted(items, key=lambda t: (t[0], t[1])) for x in hop]
    return (*out, f"answer ({step})")


def _minimal(value: list[_Link]) -> list[_Link]:
    """Value links without a set that holds a piece whose own removal changed the value: the
    set is not minimal (that piece alone does it), and the piece is named once, alone."""
    alone = {link.suspect.id for link in value if link.suspect.kind != "set"}
    return [link for link in value
            if link.suspect.kind != "set" or not alone & set(link.suspect.ids or ())]


def causal_order(suspects: Sequence[Suspect], cands: Sequence[Candidate],
                 step: str, *, expect: bool = False) -> Order:
    """Roots, mediators and necessary pieces among the confirmed suspects (module doc).

    With ``expect`` a re-run that matches is a fix: when no fix kept the answer's
    values, the matches that lost them lead after all (what the user asked for).
    """
    by_id = {c.id: c for c in cands}
    confirmed = [s for s in suspects if s.verdict == "confirmed"]
    if expect and confirmed and all(s.effect in ("lost", "wording") for s in confirmed):
        promoted = {id(s): replace(s, effect="value") for s in confirmed}
        suspects = [promoted.get(id(s), s) for s in suspects]
        confirmed = [promoted[id(s)] for s in confirmed]
    value = _minimal([link for link in _links(confirmed, by_id)
                      if link.suspect.effect == "value" or link.suspect.effect is None])
    needed = [s for s in confirmed if s.effect == "lost"]
    reworded = [s for s in confirmed if s.effect == "wording"]
    roots, mediators = _roots(value)
    mediators += _carried(roots, cands)
    role: dict[int, Role] = {id(r.suspect): "root" for r in roots}
    role |= {id(m.suspect): "mediator" for m in mediators}
    role |= {id(s): "necessary" for s in needed}
    role |= {id(s): "wording" for s in reworded}
    order = {"root": 0, "mediator": 1, "necessary": 2, "wording": 3}
    ranked = sorted(suspects, key=lambda s: order.get(role.get(id(s), ""), 3))
    out = tuple(replace(s, rank=i, role=role.get(id(s))) for i, s in enumerate(ranked, start=1))
    root_ids = {id(r.suspect) for r in roots}
    return Order(suspects=out, roots=tuple(s for s, o in zip(out, ranked, strict=True)
                                           if id(o) in root_ids),
                 path=_path(roots, mediators, step) if roots else (),
                 necessary=tuple(s.label for s in needed),
                 outside=bool(roots) and all(r.tool for r in roots))
