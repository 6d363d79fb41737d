"""Skill vocabulary (spec §4, §7 cases 24–25): produces/consumes satisfiability."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from footprint.graph._vocabulary import (
    ArtifactVocabulary,
    check_artifact_vocabularies,
    vocabulary_of,
)
from footprint.injection import SkillStep, SkillTool, SkillToolSchema, define_skill, define_steering

K = "dataset/rows"


def tool(name: str, wants: Mapping[str, str] | None = None) -> SkillTool:
    def run(args: Mapping[str, Any]) -> str:
        return "ok"

    return SkillTool(schema=SkillToolSchema(name=name, description=name), execute=run,
                     wants=wants)


def test_given_no_declarations_when_checked_then_nothing_is_reported() -> None:
    skills = [define_skill("a", "A", "body"), define_steering("s", "be kind")]
    assert check_artifact_vocabularies(skills) == ()
    assert vocabulary_of(skills[0]) is None


def test_given_a_consumer_with_no_producer_when_checked_then_one_warning_names_it() -> None:
    chart = define_skill("chart", "Charts", "draw", consumes=[K])
    problems = check_artifact_vocabularies([chart, define_skill("x", "X", "x")])
    assert len(problems) == 1
    p = problems[0]
    assert (p.kind, p.code, p.skill) == ("warning", "artifact-kind-unsatisfied", "chart")
    assert 'Skill "chart"' in p.message and repr(K) in p.message
    assert "nothing on this agent declares `produces`" in p.message
    for blind_spot in ("earlier runs", "other agents", "external jobs", "route order"):
        assert blind_spot in p.message
    assert "wants" in p.message and "never an error" in p.message


def test_given_other_producers_when_the_kind_differs_then_the_warning_lists_what_is_made() -> None:
    skills = [
        define_skill("fetch", "F", "f", produces=["chart/spec", "b/x"]),
        define_skill("chart", "C", "c", consumes=[K]),
    ]
    (p,) = check_artifact_vocabularies(skills)
    assert "'b/x', 'chart/spec'" in p.message


def test_given_another_skill_produces_k_when_checked_then_silent() -> None:
    skills = [define_skill("chart", "C", "c", consumes=[K]),
              define_skill("fetch", "F", "f", produces=[K])]
    assert check_artifact_vocabularies(skills) == ()


def test_given_a_step_or_itself_produces_k_when_checked_then_silent() -> None:
    by_step = define_skill(
        "etl", "E", "e", tools=[tool("load")],
        steps=[SkillStep(tool="load", note="load rows", produces=(K,))],
    )
    chart = define_skill("chart", "C", "c", consumes=[K])
    itself = define_skill("loop", "L", "l", consumes=[K], produces=[K])
    assert check_artifact_vocabularies([by_step, chart]) == ()
    assert check_artifact_vocabularies([itself]) == ()


def test_given_its_own_tool_wants_k_when_checked_then_silent_but_another_kind_warns() -> None:
    ok = define_skill("chart", "C", "c", consumes=[K], tools=[tool("draw", {"rows": K})])
    other = define_skill("chart", "C", "c", consumes=[K], tools=[tool("draw", {"r": "x/y"})])
    assert check_artifact_vocabularies([ok]) == ()
    assert len(check_artifact_vocabularies([other])) == 1


def test_given_case_or_prefix_differences_when_checked_then_they_do_not_match() -> None:
    for made in ("Dataset/Rows", "dataset", "dataset/rows/extra"):
        skills = [define_skill("p", "P", "p", produces=[made]),
                  define_skill("c", "C", "c", consumes=[K])]
        assert [p.skill for p in check_artifact_vocabularies(skills)] == ["c"]


def _stepped(skill_consumes: list[str] | None = None, first_produces: bool = False,
             wants: Mapping[str, str] | None = None) -> Any:
    return define_skill(
        "chart", "C", "c", consumes=skill_consumes,
        tools=[tool("fetch"), tool("render", wants)],
        steps=[SkillStep(tool="fetch", note="fetch", produces=(K,) if first_produces else None),
               SkillStep(tool="render", note="render", consumes=(K,))],
    )


def test_given_a_step_consuming_k_with_nothing_before_it_when_checked_then_it_warns() -> None:
    (p,) = check_artifact_vocabularies([_stepped()])
    assert p.skill == "chart"
    assert "Step 2 of \"chart\" ('render')" in p.message


def test_given_an_earlier_step_or_the_steps_tool_when_checked_then_the_step_is_silent() -> None:
    assert check_artifact_vocabularies([_stepped(first_produces=True)]) == ()
    assert check_artifact_vocabularies([_stepped(wants={"rows": K})]) == ()


def test_given_the_skill_consumes_k_when_checked_then_the_skill_warns_instead() -> None:
    (p,) = check_artifact_vocabularies([_stepped(skill_consumes=[K])])
    assert p.message.startswith('Skill "chart"')


def test_given_another_skills_tool_wants_k_when_checked_then_the_step_still_warns() -> None:
    other = define_skill("other", "O", "o", tools=[tool("use", {"rows": K})])
    problems = check_artifact_vocabularies([_stepped(), other])
    assert [p.skill for p in problems] == ["chart"]


def test_given_a_declaring_skill_when_read_then_vocabulary_of_returns_both_lists() -> None:
    skill = define_skill("a", "A", "a", produces=["x/y"], consumes=["u/v"])
    assert vocabulary_of(skill) == ArtifactVocabulary(produces=("x/y",), consumes=("u/v",))


kinds = st.lists(st.sampled_from(["a/x", "b/y", "c/z", "A/x"]), min_size=1, max_size=3,
                 unique=True)


@given(st.lists(st.tuples(st.none() | kinds, st.none() | kinds), min_size=1, max_size=4))
def test_given_random_vocabularies_when_checked_then_warnings_match_the_rule(
    decls: list[tuple[list[str] | None, list[str] | None]],
) -> None:
    skills = [define_skill(f"s{i}", "S", "s", produces=p, consumes=c)
              for i, (p, c) in enumerate(decls)]
    made = {k for p, _ in decls for k in (p or [])}
    expected = [f"s{i}" for i, (_, c) in enumerate(decls) for k in (c or []) if k not in made]
    problems = check_artifact_vocabularies(skills)
    assert [p.skill for p in problems] == expected
    assert all(p.kind == "warning" for p in problems)
