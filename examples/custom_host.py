"""Your own host loop, checked against the host contract by the conformance kit.

A "foreign" host is any loop that mounts a footprint skill graph without
using ``footprint.Agent``. ``footprint.hostkit.check_host`` drives a small
adapter of it through scripted iterations and reports, for each of the five
obligations, ``passed`` or exactly what went wrong.

Run it: ``python examples/custom_host.py``. It checks a correct host, then a
host that forgets the pick gate, and prints both reports.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint.graph import SkillGraph
from footprint.hostkit import KitEvent, KitIteration, check_host
from footprint.injection import InjectionContext, ToolResult, evaluate_injections


class MiniHost:
    """A minimal host: carries the cursor, gates picks, publishes hops, logs events."""

    def __init__(self, graph: SkillGraph) -> None:
        self.graph = graph
        self.start_run("")

    def start_run(self, user_message: str) -> None:
        self.message, self.turn_iteration = user_message, 0
        self.cursor: str | None = None
        self.pending: str | None = None
        self.activated: tuple[str, ...] = ()
        self.active: tuple[str, ...] = ()

    def allows(self, skill_id: str) -> bool:
        """The pick gate: a hop from the cursor, or an open skill."""
        graph = self.graph
        return skill_id in graph.reachable_skills(self.cursor) + graph.open_skills()

    def iterate(self, *, tool_results: Sequence[ToolResult] = (),
                picks: Sequence[str] = ()) -> KitIteration:
        self.turn_iteration += 1
        ctx = InjectionContext(  # built once: the cursor and the triggers read the same ctx
            iteration=self.turn_iteration, user_message=self.message,
            tool_results=tuple(tool_results), activated_injection_ids=self.activated,
            current_skill_id=self.cursor, pending_skill_pick=self.pending)
        move = self.graph.explain_next_skill(ctx)
        active = tuple(i.id for i in evaluate_injections(self.graph.skills, ctx).active)
        events = [KitEvent(name="skill.activated", payload={"skill_id": s})
                  for s in active if s not in self.active]
        events += [KitEvent(name="skill.deactivated", payload={"skill_id": s})
                   for s in self.active if s not in active]
        if move.conflict is not None:
            events.append(KitEvent(name="skill.route_conflict",
                                   payload={"winner": move.conflict.winner.target}))
        self.cursor, self.active, self.pending = move.to, active, None
        accepted = tuple(self._pick(p, events) for p in picks)
        return KitIteration(cursor=self.cursor, active_skill_ids=active, accepted=accepted,
                            pending_pick=self.pending, events=tuple(events))

    def _pick(self, skill_id: str, events: list[KitEvent]) -> bool:
        if not self.allows(skill_id):
            events.append(KitEvent(name="skill.rejected", payload={"requested_id": skill_id}))
            return False
        self.activated = (*self.activated, skill_id)
        if skill_id in self.graph.reachable_skills(self.cursor):
            self.pending = skill_id
        return True


class UngatedHost(MiniHost):
    """The classic mistake: every read_skill is accepted."""

    def allows(self, skill_id: str) -> bool:
        return True


def main() -> int:
    good, bad = check_host(MiniHost), check_host(UngatedHost)
    print("MiniHost\n" + good.summary())
    print("\nUngatedHost\n" + bad.summary())
    return 0 if good.passed and not bad.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
