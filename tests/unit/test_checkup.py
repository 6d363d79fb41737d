"""The check-up (spec §2.10, §7 cases 13 and 26)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, cast

import pytest

from footprint._errors import ConfigError
from footprint.graph import Keywords, KeywordScorer, Regex, skill_graph
from footprint.injection import Injection, SkillTool, SkillToolSchema, define_skill


def sk(sid: str, body: str = "Do the work.", tools: tuple[str, ...] = ()) -> Injection:
    def run(args: Mapping[str, Any]) -> str:
        return "ok"

    return define_skill(sid, sid.title(), body, tools=[
        SkillTool(schema=SkillToolSchema(name=t, description=t), execute=run) for t in tools
    ])


A, B, C = sk("a"), sk("b"), sk("c")


def test_given_two_unconditional_entries_when_checked_then_multi_entry_fanout() -> None:
    graph = skill_graph(A, B).entry(A).entry(B).build(check="off")
    report = graph.checkup()
    assert report.ok and "multi-entry-fanout" in report.codes()
    (p,) = [p for p in report.problems if p.code == "multi-entry-fanout"]
    assert p.kind == "warning" and p.skill == "a"


def test_given_a_rule_router_when_checked_then_no_fanout() -> None:
    graph = skill_graph(A, B).entry(A).entry(B).classify(KeywordScorer()).build(check="off")
    assert "multi-entry-fanout" not in graph.checkup().codes()


def test_given_a_bare_route_when_checked_then_model_edge_only_names_the_target() -> None:
    graph = skill_graph(A, B, C).entry(A).route("a", "b").route("a", "c", on_tool_return="t")
    problems = graph.build(check="off").checkup().problems
    assert [(p.code, p.skill) for p in problems if p.code == "model-edge-only"] == [
        ("model-edge-only", "b")]
    assert "unreachable-skill" not in [p.code for p in problems]


def test_given_no_entry_when_built_then_throw_raises_warn_warns_off_is_silent() -> None:
    with pytest.raises(ConfigError, match="no-entry"):
        skill_graph(A, B).route("a", "b", on_tool_return="t").build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph = skill_graph(A, B).route("a", "b", on_tool_return="t").build(check="warn")
    assert any("no-entry" in str(w.message) for w in caught)
    assert not graph.checkup().ok
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        skill_graph(A, B).route("a", "b", on_tool_return="t").build(check="off")


def test_given_a_crossed_guard_under_off_when_checked_then_not_ok_with_the_caption() -> None:
    graph = (skill_graph(A, B).entry(A)
             .route("a", "b", guard={"score": {"gt": 5, "lt": 3}}).build(check="off"))
    report = graph.checkup()
    assert not report.ok
    (p,) = report.errors
    assert (p.code, p.from_skill, p.to) == ("guard-unsatisfiable", "a", "b")
    assert "score > 5 AND score < 3" in p.message
    with pytest.raises(ConfigError, match="guard-unsatisfiable"):
        skill_graph(A, B).entry(A).route("a", "b", guard={"score": {"gt": 5, "lt": 3}}).build()


def test_given_a_body_naming_tools_when_known_tools_vary_then_body_checks_follow() -> None:
    writer = sk("writer", "Call lookup_order(id) first, then use send_mail.", tools=("draft",))
    mailer = sk("mailer", tools=("send_mail",))
    graph = (skill_graph(writer, mailer).entry(writer)
             .route("writer", "mailer", on_tool_return="draft").build(check="off"))
    assert not any(c.startswith("body-") for c in graph.checkup().codes())
    codes = graph.checkup(known_tools=[]).codes()
    assert codes.count("body-foreign-tool") == 1 and codes.count("body-unknown-tool") == 1
    cleared = graph.checkup(known_tools=["lookup_order", "send_mail"]).codes()
    assert not any(c.startswith("body-") for c in cleared)
    bad = graph.checkup(known_tools=cast(list[str], ["", 3]))
    assert bad.codes().count("unusable-tool-name") == 2 and not bad.ok


def test_given_wiring_smells_when_checked_then_codes_come_in_table_order() -> None:
    graph = (skill_graph(A, B, C, sk("d"), sk("e")).entry(A).entry(B, match=Keywords(("x",)))
             .route("b", "c", on_tool_return="x").route("b", "d", on_tool_return="z")
             .route("c", "c", on_tool_return="y").build(check="off"))
    codes = graph.checkup().codes()
    assert codes == ("unreachable-skill", "multi-entry-fanout", "dead-entry-step",
                     "ambiguous-routes", "self-loop")


def test_given_shadowing_matchers_when_checked_then_shadowed_and_overlap() -> None:
    graph = (skill_graph(A, B, C, sk("d"))
             .entry(A, match=Keywords(("refund", "money")))
             .entry(B, match=Keywords(("refund",)))
             .entry(C, match=Keywords(("money", "invoice")))
             .entry("d", match=Regex("^x")).build(check="off"))
    found = [(p.code, p.skill, p.from_skill) for p in graph.checkup().problems
             if p.code in ("rules-shadowed-by-order", "overlapping-rules")]
    assert found == [("rules-shadowed-by-order", "b", "a"), ("overlapping-rules", "c", "a")]


def test_given_examples_and_never_routes_when_checked_then_findings_and_a_note() -> None:
    graph = (skill_graph(A, B)
             .entry(A, match=Keywords(("refund",)), examples=["refund please", "hello"])
             .entry(B, match=Keywords(("refund", "card")), examples=["my refund"])
             .never_routes(["a refund joke", "hello"]).build(check="off"))
    report = graph.checkup()
    rows = [(p.code, p.kind, p.example) for p in report.problems
            if p.code.startswith(("example", "never"))]
    assert rows == [
        ("example-misses-own-rule", "error", "hello"),
        ("example-shadowed-by-earlier", "error", "my refund"),
        ("never-routes-claimed", "error", "a refund joke"),
        ("never-routes-contradicts-example", "error", "hello"),
    ]
    assert len(report.notes) == 1 and "not proof of coverage" in report.notes[0]
    assert skill_graph(A).entry(A).build(check="off").checkup().notes == ()


def test_given_many_thin_skills_when_checked_then_size_heuristics_warn() -> None:
    skills = [sk(f"s{i}", "Short body.", tools=(f"crm_get{i}", f"crm_put{i}", f"crm_del{i}"))
              for i in range(4)] + [sk("one", "Tiny.", tools=("only_tool",))]
    graph = skill_graph(*skills).entry(skills[0]).build(check="off")
    codes = graph.checkup().codes()
    assert codes.count("tools-share-prefix") == 4
    assert codes.count("skill-wraps-one-tool") == 1
    assert codes.count("few-declared-edges") == 1


def test_given_three_conditional_entries_when_checked_then_entry_heuristics_warn() -> None:
    graph = (skill_graph(A, B, C)
             .entry(A, match=Keywords(("alpha",))).entry(B, match=Keywords(("beta",)))
             .entry(C, match=Keywords(("gamma",))).build(check="off"))
    codes = graph.checkup().codes()
    assert "one-way-entries" in codes and "no-negative-evidence" in codes


def test_given_bare_and_island_routes_into_a_skill_when_checked_then_one_model_edge_only() -> None:
    x = sk("x")
    graph = skill_graph(A, B, x).entry(A).route("a", "b").route("x", "b", on_tool_return="t")
    problems = graph.build(check="off").checkup().problems
    about_b = [p for p in problems if p.skill == "b"]
    assert [p.code for p in about_b] == ["model-edge-only"]
    (p,) = about_b
    assert "no entry or deterministic route leads to it" not in p.message
    assert "'x'" in p.message and "read_skill" in p.message
    for q in problems:
        if q.code == "unreachable-skill" and "'b'" in q.message:
            assert "open skill" not in q.message and "no route leads to it" not in q.message
