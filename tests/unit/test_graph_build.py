"""Skill graph declaration and compilation (spec §2.1, §2.4; §7 cases 6 and 13)."""

from __future__ import annotations

import re

import pytest

from footprint._errors import ConfigError
from footprint.graph import (
    Intent,
    Keywords,
    KeywordScorer,
    Provenance,
    Regex,
    SkillGraph,
    skill_graph,
)
from footprint.injection import (
    Always,
    Injection,
    InjectionContext,
    LLMActivated,
    Rule,
    define_instruction,
    define_skill,
)


def _skill(skill_id: str) -> Injection:
    return define_skill(skill_id, f"handles {skill_id}", f"You are in {skill_id}.")


A, B, C, D = (_skill(x) for x in ("a", "b", "c", "d"))


def _ctx(message: str = "hello", **kw: object) -> InjectionContext:
    return InjectionContext(iteration=kw.pop("iteration", 1), user_message=message, **kw)  # type: ignore[arg-type]


# ── case 6: compiled triggers ───────────────────────────────────────────────


def test_given_an_unconditional_entry_when_built_then_it_compiles_to_always() -> None:
    graph = skill_graph(A, B).entry(A).route(A, B).build(check="off")
    assert isinstance(graph.skill("a").trigger, Always)


def test_given_a_conditional_entry_and_a_route_target_when_built_then_both_become_rules() -> None:
    graph = (
        skill_graph(A, B)
        .entry(A, match=Keywords(("refund",)))
        .route(A, B, on_tool_return="probe")
        .build(check="off")
    )
    assert isinstance(graph.skill("a").trigger, Rule)
    assert isinstance(graph.skill("b").trigger, Rule)


def test_given_a_bare_edge_target_when_built_then_it_stays_llm_activated() -> None:
    graph = skill_graph(A, B).entry(A).route(A, B).build(check="off")
    assert isinstance(graph.skill("b").trigger, LLMActivated)
    assert graph.declared_skills[1] is B


def test_given_when_with_on_tool_return_when_routed_then_build_raises() -> None:
    builder = skill_graph(A, B).entry(A).route(A, B, when=lambda r: True, on_tool_return="x")
    with pytest.raises(ConfigError, match=r"route 'a' -> 'b' combines when="):
        builder.build()


def test_given_a_rule_entry_when_its_condition_holds_cold_then_the_compiled_trigger_is_active() -> (
    None
):
    graph = skill_graph(A, B).entry(A, when=lambda c: "go" in c.user_message).build(check="off")
    rule = graph.skill("a").trigger
    assert isinstance(rule, Rule)
    assert bool(rule.active_when(_ctx("go now"))) is True
    assert bool(rule.active_when(_ctx("stop"))) is False


# ── provenance and edges ────────────────────────────────────────────────────


def test_given_entries_and_routes_when_built_then_provenance_names_how_each_skill_is_reached() -> (
    None
):
    graph = (
        skill_graph(A, B, C)
        .entry(A, match=Regex(r"refund"), label="refunds")
        .route(A, B, on_tool_return="probe", guard={"risk": {"gte": "high"}})
        .route(B, C)
        .build(check="off")
    )
    assert graph.skill("a").metadata["skill_graph"] == Provenance(
        via="entry", label="refunds", match=graph.entries[0].matcher.caption()  # type: ignore[union-attr]
    )
    route_prov = graph.skill("b").metadata["skill_graph"]
    assert route_prov.via == "route" and route_prov.from_skill == "a"
    assert route_prov.trigger_kind == "on-tool-return"
    assert "risk" in route_prov.guard
    assert graph.skill("c").metadata["skill_graph"] == Provenance(via="model")


def test_given_status_and_tool_routes_when_edges_listed_then_kinds_and_derived_labels_follow() -> (
    None
):
    graph = (
        skill_graph(A, B, C, D)
        .entry(A)
        .route(A, B, on_tool_return="pay", on_tool_status=("failure", "denied"))
        .route(A, C, on_tool_return="probe")
        .route(A, D, guard={"n": {"gt": 1}})
        .build(check="off")
    )
    edges = graph.edges()
    assert [e.kind for e in edges] == ["entry", "on-tool-status", "on-tool-return", "guard"]
    assert edges[1].label == "on pay status=failure|denied"
    assert edges[2].label == "on probe"
    assert edges[3].label is None and edges[3].guard is not None


# ── §2.1 build refusals ─────────────────────────────────────────────────────


def test_given_a_non_skill_injection_when_declared_then_build_refuses_naming_the_flavor() -> None:
    note = define_instruction("note", prompt="be brief")
    with pytest.raises(ConfigError, match=r"'note' has flavor 'instructions'"):
        skill_graph(A, note)


def test_given_two_objects_sharing_an_id_when_declared_then_build_refuses() -> None:
    twin = define_skill("a", "another a", "different body")
    with pytest.raises(ConfigError, match=r"share the id 'a'"):
        skill_graph(A).entry(twin)


def test_given_match_and_when_on_one_entry_when_declared_then_it_raises() -> None:
    with pytest.raises(ConfigError, match="both when= and match="):
        skill_graph(A).entry(A, when=lambda c: True, match=Regex("x"))


def test_given_an_unknown_route_id_when_built_then_the_error_suggests_the_close_id() -> None:
    with pytest.raises(ConfigError, match=r"unknown skill 'bb'.*did you mean 'b'"):
        skill_graph(A, B).entry(A).route("a", "bb", on_tool_return="x").build()


def test_given_an_intent_entry_without_classify_when_built_then_intent_without_classify() -> None:
    with pytest.raises(ConfigError, match="intent-without-classify"):
        skill_graph(A).entry(A, match=Intent("refunds", ("money back",))).build()


def test_given_empty_on_tool_status_when_built_then_it_refuses() -> None:
    with pytest.raises(ConfigError, match=r"on_tool_status=\(\)"):
        skill_graph(A, B).entry(A).route(A, B, on_tool_status=()).build()


def test_given_an_unknown_status_when_routed_then_it_refuses_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"'sucess' is not a result status.*'success'"):
        skill_graph(A, B).route(A, B, on_tool_status="sucess")  # type: ignore[arg-type]


def test_given_a_malformed_guard_when_built_then_the_error_names_the_route() -> None:
    with pytest.raises(ConfigError, match=r"route 'a' -> 'b'"):
        skill_graph(A, B).entry(A).route(A, B, guard={"x": {"bogus": 1}}).build()


def test_given_two_entry_routers_when_declared_then_the_second_is_refused() -> None:
    with pytest.raises(ConfigError, match="already has the entry router 'classify'"):
        skill_graph(A).entry(A).classify(KeywordScorer()).entry_by_read()


@pytest.mark.parametrize(
    ("examples", "fragment"),
    [(("refund me", "  REFUND   me "), "repeats"), (("",), "not a non-empty string")],
)
def test_given_bad_example_rows_when_built_then_it_refuses(
    examples: tuple[str, ...], fragment: str
) -> None:
    builder = skill_graph(A).entry(A, match=Keywords(("refund",)), examples=examples)
    with pytest.raises(ConfigError, match=fragment):
        builder.build(check="off")


def test_given_duplicate_never_routes_when_built_then_it_refuses() -> None:
    builder = skill_graph(A).entry(A).never_routes(["hi there", "Hi  there"])
    with pytest.raises(ConfigError, match=r"never_routes\[1\]"):
        builder.build(check="off")


def test_given_a_bad_check_mode_when_built_then_it_names_the_modes() -> None:
    with pytest.raises(ConfigError, match="'throw', 'warn' or 'off'"):
        skill_graph(A).entry(A).build(check="loud")  # type: ignore[arg-type]


# ── case 13 and check modes (via the check-up) ──────────────────────────────


def test_given_crossed_bounds_when_built_then_it_raises_guard_unsatisfiable() -> None:
    builder = skill_graph(A, B).entry(A).route(A, B, guard={"score": {"gt": 5, "lt": 3}})
    with pytest.raises(ConfigError, match=r"guard-unsatisfiable.*score > 5 AND score < 3"):
        builder.build()


def test_given_crossed_bounds_when_built_with_check_off_then_the_checkup_reports_it() -> None:
    graph = (
        skill_graph(A, B).entry(A).route(A, B, guard={"score": {"gt": 5, "lt": 3}})
        .build(check="off")
    )
    report = graph.checkup()
    assert report.ok is False
    bad = [p for p in report.problems if p.code == "guard-unsatisfiable"]
    assert bad and "score > 5 AND score < 3" in bad[0].message


def test_given_no_entry_when_built_then_throw_raises_and_warn_only_warns() -> None:
    builder = skill_graph(A, B).route(A, B, on_tool_return="x")
    with pytest.raises(ConfigError, match="no-entry"):
        builder.build()
    with pytest.warns(UserWarning, match="no-entry"):
        graph = builder.build(check="warn")
    assert graph.entry_ids == ()


# ── the object form ─────────────────────────────────────────────────────────


def test_given_the_object_form_when_built_then_it_equals_the_fluent_form() -> None:
    spec = SkillGraph.from_spec(
        skills=[A, B], start="a",
        steps=[{"from": "a", "to": "b", "on_tool_return": "probe", "label": "found"}],
    )
    fluent = skill_graph(A, B).entry(A).route(A, B, on_tool_return="probe", label="found").build()
    assert spec.entries == fluent.entries and spec.routes == fluent.routes


def test_given_rules_naming_unknown_ids_when_built_then_rule_id_exists_lists_every_index() -> None:
    pattern = r"rule-id-exists.*index 0 'x', index 2 'y'.*known ids: a, b"
    with pytest.raises(ConfigError, match=pattern):
        SkillGraph.from_spec(
            skills=[A, B],
            start={"rules": [
                {"use": "x", "match": Regex("x")},
                {"use": "a", "match": Regex("a")},
                {"use": "y", "match": Regex("y")},
            ]},
        )


def test_given_routing_without_classify_when_built_then_it_refuses() -> None:
    from footprint.graph import RoutingPolicy

    with pytest.raises(ConfigError, match="without start\\['classify'\\]"):
        SkillGraph.from_spec(
            skills=[A], start={"rules": [{"use": "a", "match": Regex("a")}],
                               "routing": RoutingPolicy()},
        )


def test_given_a_step_with_an_unknown_key_when_built_then_the_allowed_keys_are_listed() -> None:
    with pytest.raises(ConfigError, match=r"steps\[0\] has unknown keys \['onToolReturn'\]"):
        SkillGraph.from_spec(skills=[A, B], start="a",
                             steps=[{"from": "a", "to": "b", "onToolReturn": "x"}])


def test_given_entries_start_without_scorer_when_built_then_it_is_entry_by_read() -> None:
    graph = SkillGraph.from_spec(skills=[A, B], start={"entries": ["a", "b"]}, check="off")
    assert graph.router is not None and graph.router.kind == "entry-by-read"
    assert graph.is_exclusive and isinstance(graph.skill("a").trigger, Rule)


def test_given_a_regex_on_tool_return_when_edges_listed_then_the_label_shows_the_pattern() -> None:
    graph = (
        skill_graph(A, B).entry(A).route(A, B, on_tool_return=re.compile(r"^read_"))
        .build(check="off")
    )
    assert graph.edges()[1].label == "on /^read_/"
