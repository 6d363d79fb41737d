"""The reference host passes its own conformance kit (spec §5, the five obligations)."""

from __future__ import annotations

from footprint.agent._kit import AgentKitHost
from footprint.hostkit import OBLIGATIONS, check_host, kit_graph


def test_given_the_agent_adapter_when_the_kit_runs_then_all_five_obligations_pass() -> None:
    report = check_host(AgentKitHost)
    assert [r.number for r in report.results] == [1, 2, 3, 4, 5]
    assert [r.title for r in report.results] == list(OBLIGATIONS)
    assert report.passed, report.summary()
    assert report.failed() == ()


def test_given_the_adapter_when_an_unreachable_pick_is_made_then_the_real_gate_refuses_it(
) -> None:
    host = AgentKitHost(kit_graph())
    host.start_run("hello")
    first = host.iterate(picks=["audit"])
    assert first.cursor == "triage" and first.accepted == (False,)
    assert [e.name for e in first.events] == ["skill.activated", "skill.rejected"]
    second = host.iterate(picks=["refund"])
    assert second.accepted == (True,) and second.pending_pick == "refund"
    third = host.iterate()
    assert third.cursor == "refund" and third.pending_pick is None
