"""The host contract and its conformance kit (spec §5, seed 000)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from footprint.graph import SkillGraph, skill_graph
from footprint.graph._steps import rekey_pointer, step_plans
from footprint.hostkit import (
    KitEvent,
    KitIteration,
    SkillGraphHost,
    check_host,
    kit_graph,
    list_skills_descriptor,
    read_skill_descriptor,
    skip_step_descriptor,
)
from footprint.hostkit._descriptors import skill_descriptors
from footprint.injection import (
    InjectionContext,
    SkillStep,
    SkillTool,
    SkillToolSchema,
    ToolResult,
    TurnRoute,
    define_skill,
    evaluate_injections,
)


class ToyHost:
    """A correct host on the graph API; each obligation is one overridable method."""

    def __init__(self, graph: SkillGraph) -> None:
        self.graph = graph
        self.cursor: str | None = None
        self.pending: str | None = None
        self.start_run("")

    # ── the contract ──────────────────────────────────────────────────────
    def advance_cursor(self, ctx: InjectionContext) -> str | None:
        return self.graph.next_skill(ctx)

    def accept_skill_pick(self, skill_id: str, current_skill_id: str | None) -> bool:
        allowed = self.graph.reachable_skills(current_skill_id) + self.graph.open_skills()
        return skill_id in allowed

    def publish_accepted_pick(self, skill_id: str | None) -> None:
        self.pending = skill_id

    def carry_cursor(self, next_skill_id: str | None) -> None:
        self.cursor = next_skill_id

    def emit_skill_event(self, name: str, payload: Mapping[str, object]) -> None:
        self.events.append(KitEvent(name=name, payload=dict(payload)))

    # ── the kit adapter ───────────────────────────────────────────────────
    def start_run(self, user_message: str) -> None:
        self.message, self.iteration = user_message, 0
        self.cursor = None
        self.pending = None
        self.activated: tuple[str, ...] = ()
        self.active: tuple[str, ...] = ()
        self.events: list[KitEvent] = []

    def trigger_ctx(self, ctx: InjectionContext) -> InjectionContext:
        return ctx

    def iterate(self, *, tool_results: Sequence[ToolResult] = (),
                picks: Sequence[str] = ()) -> KitIteration:
        self.iteration += 1
        self.events = []
        ctx = InjectionContext(
            iteration=self.iteration, user_message=self.message,
            tool_results=tuple(tool_results), activated_injection_ids=self.activated,
            current_skill_id=self.cursor, pending_skill_pick=self.pending,
        )
        move = self.graph.explain_next_skill(ctx)
        advanced = self.advance_cursor(ctx)
        active = tuple(i.id for i in
                       evaluate_injections(self.graph.skills, self.trigger_ctx(ctx)).active)
        self._emit_delta(active)
        if move.conflict is not None:
            self.emit_skill_event("skill.route_conflict", {"winner": move.conflict.winner.target})
        self.carry_cursor(advanced)
        self.clear_pending()
        accepted = tuple(self._pick(p, advanced) for p in picks)
        return KitIteration(cursor=advanced, active_skill_ids=active, accepted=accepted,
                            pending_pick=self.pending, events=tuple(self.events))

    def clear_pending(self) -> None:
        self.publish_accepted_pick(None)

    def _emit_delta(self, active: tuple[str, ...]) -> None:
        for sid in active:
            if sid not in self.active:
                self.emit_skill_event("skill.activated", {"skill_id": sid})
        for sid in self.active:
            if sid not in active:
                self.emit_skill_event("skill.deactivated", {"skill_id": sid})
        self.active = active

    def _pick(self, skill_id: str, cursor: str | None) -> bool:
        if not self.accept_skill_pick(skill_id, cursor):
            self.refuse(skill_id, cursor)
            return False
        self.activated = (*self.activated, skill_id)
        if skill_id in self.graph.reachable_skills(cursor):
            self.publish_accepted_pick(skill_id)
        return True

    def refuse(self, skill_id: str, cursor: str | None) -> None:
        self.emit_skill_event("skill.rejected", {"requested_id": skill_id, "current": cursor})


class StaleCtxHost(ToyHost):
    def trigger_ctx(self, ctx: InjectionContext) -> InjectionContext:
        return InjectionContext(iteration=ctx.iteration, user_message=ctx.user_message,
                                current_skill_id=ctx.current_skill_id)


class NoGateHost(ToyHost):
    def accept_skill_pick(self, skill_id: str, current_skill_id: str | None) -> bool:
        return True


class PublishesRefusedHost(ToyHost):
    def refuse(self, skill_id: str, cursor: str | None) -> None:
        super().refuse(skill_id, cursor)
        self.publish_accepted_pick(skill_id)


class NeverClearsHost(ToyHost):
    def clear_pending(self) -> None:
        pass


class NoCarryHost(ToyHost):
    def carry_cursor(self, next_skill_id: str | None) -> None:
        self.cursor = None


class SilentRejectHost(ToyHost):
    def refuse(self, skill_id: str, cursor: str | None) -> None:
        pass


def test_given_the_toy_host_when_typed_then_it_satisfies_the_contract_protocol() -> None:
    assert isinstance(ToyHost(kit_graph()), SkillGraphHost)


def test_given_a_correct_host_when_checked_then_all_five_obligations_pass() -> None:
    report = check_host(ToyHost)
    assert report.passed, report.summary()
    assert [r.number for r in report.results] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("host", "obligation", "needle"),
    [
        (StaleCtxHost, 1, "triggers saw a different ctx"),
        (NoGateHost, 2, "read_skill('audit') from cursor 'triage' was accepted"),
        (PublishesRefusedHost, 3, "refused pick 'audit' was published"),
        (NeverClearsHost, 3, "clear it at the top of every iteration"),
        (NoCarryHost, 4, "iteration 2: cursor 'triage', expected 'billing'"),
        (SilentRejectHost, 5, "no 'rejected' event"),
    ],
)
def test_given_a_broken_host_when_checked_then_exactly_its_obligation_fails(
    host: type[ToyHost], obligation: int, needle: str,
) -> None:
    report = check_host(host)
    assert report.failed() == (obligation,), report.summary()
    violation = report.results[obligation - 1].violation
    assert violation is not None and needle in violation


def test_given_a_crashing_host_when_checked_then_every_obligation_reports_the_raise() -> None:
    def make(graph: SkillGraph) -> ToyHost:
        raise RuntimeError("adapter exploded")

    report = check_host(make)
    assert report.failed() == (1, 2, 3, 4, 5)
    assert all("RuntimeError: adapter exploded" in (r.violation or "") for r in report.results)


# ── descriptors ───────────────────────────────────────────────────────────


def test_given_a_cursor_when_read_skill_is_described_then_reachable_and_refused_lists() -> None:
    graph = kit_graph()
    d = read_skill_descriptor(graph, cursor="triage", hidden=("refund",))
    assert d.name == "read_skill"
    assert "Reachable from here: billing — Billing questions.; faq — Common questions." in (
        d.description)
    assert "Not reachable from here (read_skill for these will be refused): audit." in (
        d.description)
    assert "refund" not in d.description
    assert d.input_schema["properties"]["id"]["enum"] == ["triage", "billing", "audit", "faq"]
    assert d.execute({"id": "billing"}) == "Skill 'billing' activated for the next iteration."
    assert d.execute({"id": "audit"}).startswith('read_skill("audit") is not reachable')
    assert "refund" not in d.execute({"id": "refund"}).split("Reachable skills:")[1]
    assert d.execute({"id": "triage"}).startswith("Already in skill 'triage'")


def test_given_an_open_menu_when_read_skill_is_described_then_it_leads_with_the_menu() -> None:
    graph = kit_graph()
    offer = TurnRoute(by="menu", offered=("billing", "refund"),
                      relevance={"billing": 0.52, "refund": 0.48})
    d = read_skill_descriptor(graph, offer=offer)
    assert "pick one: billing (52%), refund (48%)" in d.description
    closed = read_skill_descriptor(graph, cursor="billing",
                                   offer=TurnRoute(by="menu", offered=("billing",)))
    assert "pick one" not in closed.description


def test_given_plain_skills_when_described_then_available_and_unknown_text() -> None:
    tool = SkillTool(schema=SkillToolSchema(name="load", description="d"),
                     execute=lambda args: "ok")
    etl = define_skill("etl", "ETL", "Load it.", tools=[tool],
                       steps=[SkillStep(tool="load", note="load rows")], surface_mode="tool-only")
    notes = define_skill("notes", "Notes", "n")
    d = read_skill_descriptor([etl, notes], plans=step_plans([etl]))
    assert "Available skills: etl — ETL; notes — Notes." in d.description
    assert d.execute({"id": "nope"}) == "Unknown skill 'nope'. Available: etl, notes."
    assert d.execute({"id": "etl"}) == (
        "Load it. You are on step 1 of 1: load rows. Its tool: `load`.")
    assert d.execute({}).startswith("read_skill needs an id")
    listing = list_skills_descriptor(kit_graph(), cursor="triage").execute({})
    assert "- billing — Billing questions. (reachable)" in listing
    assert "- audit — Account audits. (not reachable from here)" in listing
    plans = step_plans([etl])
    skip = skip_step_descriptor(plans, rekey_pointer(plans, None, "etl"))
    assert skip.name == "skip_step" and "step 1 of 1" in skip.description
    assert "needs a reason" in skip.execute({"reason": " "})


def test_given_a_graph_with_no_hops_when_described_then_none_is_reachable() -> None:
    lone = define_skill("lone", "L", "l")
    graph = skill_graph(lone).entry(lone).build(check="off")
    d = read_skill_descriptor(graph, cursor="lone")
    assert "Reachable from here: none." in d.description


@pytest.mark.parametrize("cursor", [None, "triage", "billing"])
def test_given_one_view_when_both_skill_tools_are_described_then_each_is_as_described_alone(
    cursor: str | None,
) -> None:
    graph = kit_graph()
    offer = TurnRoute(by="menu", offered=("billing", "refund"), relevance={"billing": 0.6})
    read, listing = skill_descriptors(graph, cursor=cursor, offer=offer, hidden=("audit",))
    alone = (read_skill_descriptor(graph, cursor=cursor, offer=offer, hidden=("audit",)),
             list_skills_descriptor(graph, cursor=cursor, hidden=("audit",)))
    for both, one in zip((read, listing), alone, strict=True):
        assert (both.name, both.description, both.input_schema) == (
            one.name, one.description, one.input_schema)
        for args in ({}, {"id": "billing"}, {"id": "audit"}, {"id": "faq"}, {"id": "nope"}):
            assert both.execute(args) == one.execute(args)
