"""The pick gate (spec §2.6, Decisions §4): is a ``read_skill(id)`` allowed from here?

Order: the self-call check, then reachability (hops from the cursor plus
open skills), then the posture (``rails`` refuses every hop; ``guard``
refuses a hop that is not on the turn's open menu). A refusal carries the
teaching text that replaces the tool result. No text ever names a hidden
skill.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from footprint.graph._cascade import Posture, menu_outstanding
from footprint.graph._declare import SkillGraph
from footprint.graph._reach import dedupe
from footprint.injection import InjectionContext

__all__ = ["PickVerdict", "RefusalReason", "check_pick"]

RefusalReason: TypeAlias = Literal["unreachable", "posture", "self-call"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PickVerdict:
    """The gate's answer for one ``read_skill`` pick.

    ``accepted`` picks are appended to the activated ids; ``hop`` says the
    pick is a hop and becomes ``pending_skill_pick``. A refusal carries
    ``reason`` and ``text`` (the teaching result the model reads);
    ``allowed`` is what the model may pick from here.
    """

    requested_id: str
    accepted: bool
    current_skill_id: str | None
    allowed: tuple[str, ...]
    hop: bool = False
    reason: RefusalReason | None = None
    posture: Posture | None = None
    text: str | None = None


def _names(ids: Iterable[str]) -> str:
    return ", ".join(ids)


def _quoted(requested: str, hidden: frozenset[str]) -> str:
    return "read_skill for that skill" if requested in hidden else f'read_skill("{requested}")'


def _unreachable_text(requested: str, cursor: str | None, allowed: tuple[str, ...],
                      hidden: frozenset[str]) -> str:
    head = f"{_quoted(requested, hidden)} is not reachable from here."
    if allowed:
        return f"{head} Reachable skills: {_names(allowed)}. Pick one of these, or finish."
    where = f"'{cursor}'" if cursor is not None else "the start"
    return f"{head} No skill is reachable from {where}. Finish with what you have."


def _posture_text(requested: str, posture: Posture, open_ids: tuple[str, ...],
                  offered: tuple[str, ...] | None) -> str:
    head = f'read_skill("{requested}") is refused:'
    if posture == "rails":
        extra = f" Skills you may still read: {_names(open_ids)}." if open_ids else ""
        return (f"{head} this graph runs on rails, so only its declared routes move between "
                f"skills.{extra} Continue the current work, or finish.")
    if offered:
        return (f"{head} it is not on this turn's menu ({_names(offered)}). "
                f"Pick one of the offered skills, or finish.")
    return (f"{head} under the guard posture a hop is taken only from this turn's menu, "
            f"and no menu is open. Continue the current work, or finish.")


def _where(
    graph: SkillGraph, at: InjectionContext | str | None, hidden: Iterable[str],
    menu: tuple[str, ...] | None,
) -> tuple[str | None, frozenset[str], tuple[str, ...] | None]:
    """The advanced cursor, the hidden ids and the open menu, read off a ctx when given one."""
    if not isinstance(at, InjectionContext):
        return at, frozenset(hidden), menu
    cursor = graph.next_skill(at)
    gone = frozenset((*hidden, *(at.hidden_skill_ids or ())))
    if menu is None and at.turn_route is not None and menu_outstanding(at.turn_route, cursor):
        menu = at.turn_route.offered
    return cursor, gone, menu


def check_pick(
    graph: SkillGraph,
    requested_id: str,
    at: InjectionContext | str | None,
    posture: Posture | None = None,
    menu: tuple[str, ...] | None = None,
    hidden: Iterable[str] = (),
) -> PickVerdict:
    """Judge ``read_skill(requested_id)`` at ``at``: a ctx (its advanced cursor) or a cursor id.

    ``menu`` is the open menu's offered ids; from a ctx it is read off
    ``ctx.turn_route`` when ``menu_outstanding`` holds.
    """
    cursor, hidden_ids, menu = _where(graph, at, hidden, menu)
    hops = graph.reachable_skills(cursor, hidden_ids)
    open_ids = graph.open_skills(hidden_ids)
    allowed = dedupe(hops + open_ids)
    verdict = PickVerdict(requested_id=requested_id, accepted=False,
                          current_skill_id=cursor, allowed=allowed)
    if cursor is not None and requested_id == cursor:
        text = (f"Already in skill '{cursor}'; continue its work. "
                f"read_skill(\"{cursor}\") changes nothing.")
        return _refuse(verdict, "self-call", text)
    if requested_id not in allowed or requested_id in hidden_ids:
        return _refuse(verdict, "unreachable",
                       _unreachable_text(requested_id, cursor, allowed, hidden_ids))
    is_hop = requested_id in hops
    if posture is not None and is_hop:
        on_menu = menu is not None and requested_id in menu
        if posture == "rails" or not on_menu:
            text = _posture_text(requested_id, posture, open_ids, menu)
            return _refuse(verdict, "posture", text, posture)
    return PickVerdict(requested_id=requested_id, accepted=True, current_skill_id=cursor,
                       allowed=allowed, hop=is_hop)


def _refuse(base: PickVerdict, reason: RefusalReason, text: str,
            posture: Posture | None = None) -> PickVerdict:
    return PickVerdict(
        requested_id=base.requested_id, accepted=False, current_skill_id=base.current_skill_id,
        allowed=base.allowed, reason=reason, posture=posture, text=text,
    )
