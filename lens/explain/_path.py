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
from lens.playback._stream import clip

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
    context: tuple[Suspect, ...] = ()
    """The user's own messages whose removal changed the value: what the user said is the
    context of the root, never a root (``because the user said …``)."""


@dataclass(frozen=True, slots=True)
class _Link:
    suspect: Suspect
    reach: frozenset[str]
    chosen_by: tuple[str, ...]
    tool: bool
    made: tuple[str, ...] = ()
    """The tool calls as made (``lookup_price(sku="A12")``), one per recorded call."""


def _links(suspects: Sequence[Suspect], by_id: Mapping[str, Candidate]) -> list[_Link]:
    out: list[_Link] = []
    for s in suspects:
        members = [by_id[i] for i in (s.ids or (s.id,)) if i is not None and i in by_id]
        reach = frozenset(x for c in members for x in c.reach)
        chosen = tuple(dict.fromkeys(x for c in members for x in c.chosen_by))
        tool = bool(members) and all(c.kind == "tool_result" for c in members)
        made = tuple(dict.fromkeys(c.call for c in members if c.call))
        out.append(_Link(s, reach, chosen, tool, made))
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
            out.append(_Link(s, frozenset(c.reach), c.chosen_by, True,
                             (c.call,) if c.call else ()))
    return out


def _hop(link: _Link, diverged: Mapping[str, str] | None = None) -> list[str]:
    """The mechanism of a result: the call that chose the tool, with the arguments it gave
    (``llm#2 chose lookup_price(sku="A12")``; what a root's re-run called instead, when it
    did), and what the tool returned."""
    s = link.suspect
    calls = s.calls or ((s.id,) if s.id else ())
    chooser = ", ".join(link.chosen_by) or "a call"
    made = link.made[0] if len(link.made) == 1 else str(s.flavor)
    instead = (diverged or {}).get(calls[0]) if len(calls) == 1 else None
    made += f" ({instead})" if instead else ""
    returned = f": {clip(s.excerpt, 60)}" if len(calls) == 1 and s.excerpt else ""
    return [f"{chooser} chose {made}", "result " + ", ".join(f"#{c}" for c in calls[:3])
            + (f" (+{len(calls) - 3})" if len(calls) > 3 else "") + returned]


def _diverged(roots: Sequence[_Link], cands: Sequence[Candidate]) -> dict[str, str]:
    """Where a root's re-runs first called otherwise: for the earliest recorded call the root
    reached that its first changed re-run did not make, what that re-run called instead
    (``without it: shipping_rate(city="York")``), by the recorded call's id. Nothing when
    the re-runs' calls are unknown (a re-send makes none)."""
    out: dict[str, str] = {}
    recorded = sorted((c for c in cands if c.kind == "tool_result" and c.call),
                      key=lambda c: c.seq)
    for root in roots:
        made = root.suspect.rerun_calls
        if root.tool or not made:
            continue
        c = next((c for c in recorded if set(c.chosen_by) & root.reach
                  and c.call not in made), None)
        if c is None:
            continue
        tool = c.call.split("(", 1)[0]
        other = [m for m in made if m not in {x.call for x in recorded}]
        instead = next((m for m in other if m.startswith(f"{tool}(")), None) or (
            other[0] if other else "no such call")
        out[c.id] = f"without {root.suspect.label.split(' (+', 1)[0]}: {instead}"
    return out


def _guards(suspects: Sequence[Suspect], by_id: Mapping[str, Candidate]
            ) -> list[tuple[int, int, list[str]]]:
    """Each confirmed guarded move as a step of the path, where it acted: the guard that
    decided the route and the value it read (``guard amount lte 1000 (saw 400) ✓ passed:
    routed billing→auto_refund``)."""
    out: list[tuple[int, int, list[str]]] = []
    for s in suspects:
        c = by_id.get(s.id or "")
        if s.kind != "cursor_move" or s.verdict != "confirmed" or c is None:
            continue
        guard = next((x for x in s.chain if x.startswith("guard on ")), None)
        if guard is None:
            continue
        route, _, conds = guard.removeprefix("guard on ").partition(": ")
        judged, _, verdict = conds.rpartition(" → ")
        step = min(map(_step_no, c.reach), default=1 << 30)
        out.append((step, -1, [f"guard {judged} {verdict}: routed {route.split(' ', 1)[-1]}"]))
    return out


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


def _path(roots: Sequence[_Link], links: Sequence[_Link], step: str,
          guards: Sequence[tuple[int, int, list[str]]] = (),
          cands: Sequence[Candidate] = ()) -> tuple[str, ...]:
    """The path in the order of the calls: a piece where it first acted, each result where
    it was chosen (a piece before the results chosen at its own first call). Independent
    causes are listed apart (``A · B``); a conjunction joined (``A + B``)."""
    head = [r for r in roots if not r.tool]
    items: list[tuple[int, int, list[str]]] = []
    if head:
        groups = joint_roots([r.suspect for r in head])
        items.append((min(_first(r) for r in head), 0,
                      [" · ".join(" + ".join(s.label for s in g) for g in groups)]))
    diverged = _diverged(roots, cands)
    hops = (*(r for r in roots if r.tool), *links)
    items += [(_first(m), 1, _hop(m, diverged)) for m in hops]
    shown = {c for m in hops for c in (m.suspect.calls or (m.suspect.id,))}
    items += [(_first(link), 1, _hop(link, diverged)) for link in _links_of(
        [c for c in cands if c.id in diverged and c.id not in shown])]
    start = min((t[0] for t in items), default=0)
    items += [g for g in guards if g[0] >= start]  # a guard before the root is not its path
    out = [x for _, _, hop in sorted(items, key=lambda t: (t[0], t[1])) for x in hop]
    return (*out, f"answer ({step})")


def _links_of(cands: Sequence[Candidate]) -> list[_Link]:
    """Recorded tool results as path links (a call a root's re-runs made otherwise)."""
    return [_Link(Suspect(rank=0, kind="tool_result", id=c.id, ids=None, label=c.label,
                          flavor=c.flavor, step_id=c.step_id, score=c.score, chain=c.chain,
                          excerpt=c.excerpt, calls=c.calls),
                  frozenset(c.reach), c.chosen_by, True, (c.call,) if c.call else ())
            for c in cands]


def _minimal(value: list[_Link]) -> list[_Link]:
    """Value links without a set that holds a piece whose own removal changed the value: the
    set is not minimal (that piece alone does it), and the piece is named once, alone."""
    alone = {link.suspect.id for link in value if link.suspect.kind != "set"}
    return [link for link in value
            if link.suspect.kind != "set" or not alone & set(link.suspect.ids or ())]


_COMPLEMENT = ("the complement of the confirmed cause(s): removing everything but them also "
               "changes the answer (nearly all context gone), which names no cause")


_NOT_MINIMAL = ("it holds a piece whose own removal changes the value: not minimal; that "
                "piece is named alone")


def _apart(value: list[_Link], suspects: Sequence[Suspect]
           ) -> tuple[list[_Link], list[Suspect]]:
    """Value links without the sets that are no cause of their own (:func:`_minimal`, and a
    set that is merely *everything but* the other confirmed causes: the search screens the
    rest after each find, and a model left with nearly no context answers otherwise, which
    shows no cause of the recorded value); the suspects with such a set noted as what it is."""
    minimal = _minimal(value)
    testable = {s.id for s in suspects
                if s.removable and s.kind != "set" and s.id and s.verdict != "broke"}
    causes = {link.suspect.id for link in value if link.suspect.kind != "set"}
    notes = {id(link.suspect): _NOT_MINIMAL for link in value if link not in minimal}
    notes |= {id(link.suspect): _COMPLEMENT for link in minimal
              if causes and link.suspect.kind == "set" and len(link.suspect.ids or ()) > 1
              and testable <= set(link.suspect.ids or ()) | causes}
    return ([link for link in minimal if id(link.suspect) not in notes],
            [replace(s, note="; ".join(x for x in (s.note, notes[id(s)]) if x))
             if id(s) in notes else s for s in suspects])


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
    value, suspects = _apart([link for link in _links(confirmed, by_id)
                              if link.suspect.effect == "value" or link.suspect.effect is None],
                             suspects)
    said = [link.suspect for link in value if _person(link.suspect)]
    value = [link for link in value if not _person(link.suspect)]
    needed = [s for s in confirmed if s.effect == "lost"]
    reworded = [s for s in confirmed if s.effect == "wording"]
    roots, mediators = _roots(value)
    mediators += _carried(roots, cands)
    role: dict[int, Role] = {id(r.suspect): "root" for r in roots}
    role |= {id(m.suspect): "mediator" for m in mediators}
    role |= {id(s): "necessary" for s in needed}
    role |= {id(s): "wording" for s in reworded}
    role |= {id(s): "context" for s in said}
    order = {"root": 0, "context": 1, "mediator": 1, "necessary": 2, "wording": 3}
    ranked = sorted(suspects, key=lambda s: order.get(role.get(id(s), ""), 3))
    out = tuple(replace(s, rank=i, role=role.get(id(s))) for i, s in enumerate(ranked, start=1))
    root_ids = {id(r.suspect) for r in roots}
    return Order(suspects=out, roots=tuple(s for s, o in zip(out, ranked, strict=True)
                                           if id(o) in root_ids),
                 path=_path(roots, mediators, step, _guards(suspects, by_id), cands)
                 if roots else (),
                 necessary=tuple(s.label for s in needed),
                 outside=bool(roots) and all(r.tool for r in roots),
                 context=tuple(s for s, o in zip(out, ranked, strict=True)
                               if role.get(id(o)) == "context"))


def _person(s: Suspect) -> bool:
    """A message the user wrote (an earlier turn's question): never a root cause."""
    return s.kind == "message" and s.flavor == "person"
