"""Stepped skills at the pure level (spec §2.9, §7 cases 21–23)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.graph._steps import (
    StepPlan,
    advance,
    check_steps_for_agent,
    current_step,
    decide_final,
    held_out_tools,
    read_skill_suffix,
    rekey_pointer,
    skip_step,
    skip_step_description,
    step_plans,
    step_tool_description,
)
from footprint.injection import (
    Injection,
    SkillStep,
    SkillTool,
    SkillToolSchema,
    StepPointer,
    define_instruction,
    define_skill,
)


def tool(name: str) -> SkillTool:
    def run(args: Mapping[str, Any]) -> str:
        return name

    return SkillTool(schema=SkillToolSchema(name=name, description=f"Runs {name}."), execute=run)


def stepped(on_skip: str | None = None, sid: str = "etl") -> Injection:
    return define_skill(
        sid, "ETL", "Load, clean, publish.", tools=[tool("load"), tool("clean"), tool("publish")],
        steps=[SkillStep(tool="load", note="load rows"), SkillStep(tool="clean", note="clean"),
               SkillStep(tool="publish", note="publish it")],
        on_skip=on_skip,  # type: ignore[arg-type]
    )


PLANS = step_plans([stepped(), define_skill("plain", "P", "p")])


def start() -> StepPointer:
    pointer = rekey_pointer(PLANS, None, "etl")
    assert pointer is not None
    return pointer


def test_given_skills_when_plans_are_folded_then_only_stepped_skills_have_one() -> None:
    assert list(PLANS) == ["etl"]
    plan = PLANS["etl"]
    assert (plan.total, plan.on_skip, [s.tool for s in plan.steps]) == (
        3, "advance", ["load", "clean", "publish"])


def test_given_tenants_when_the_pointer_is_rekeyed_then_keep_start_or_clear() -> None:
    assert rekey_pointer(PLANS, None, None) is None
    assert start() == StepPointer(skill_id="etl", step=1, total=3)
    mid = StepPointer(skill_id="etl", step=2, total=3)
    assert rekey_pointer(PLANS, mid, "etl") is mid
    assert rekey_pointer(PLANS, mid, "plain") is None
    assert rekey_pointer(PLANS, mid, None) is None


def test_given_a_tenure_when_tools_are_offered_then_prefix_hold_out_and_skip_text() -> None:
    pointer = start()
    assert step_tool_description(PLANS, pointer, "load", "Runs load.") == (
        "[Step 1 of 3 — load rows] Runs load.")
    assert step_tool_description(PLANS, pointer, "clean", "Runs clean.") == "Runs clean."
    assert held_out_tools(PLANS, pointer) == frozenset({"clean", "publish"})
    text = skip_step_description(PLANS, pointer)
    assert "step 1 of 3" in text and "3 of 3 steps remain" in text and "'advance'" in text


def test_given_a_clean_return_of_the_current_tool_when_advanced_then_the_pointer_moves() -> None:
    pointer = start()
    moved = advance(PLANS, pointer, tool_name="load", clean=True)
    assert moved is not None
    assert (moved.pointer.step, moved.completed, moved.step.index) == (2, False, 1)
    assert moved.result_suffix == (
        " Step 1 of 3 done. Now on step 2 of 3: clean. Its tool: `clean`.")


def test_given_an_error_or_another_tool_when_advanced_then_nothing_moves() -> None:
    pointer = start()
    assert advance(PLANS, pointer, tool_name="load", clean=False) is None
    assert advance(PLANS, pointer, tool_name="clean", clean=True) is None
    assert advance(PLANS, None, tool_name="load", clean=True) is None


def test_given_the_last_step_when_advanced_then_completed_and_all_steps_complete() -> None:
    pointer = StepPointer(skill_id="etl", step=3, total=3)
    moved = advance(PLANS, pointer, tool_name="publish", clean=True)
    assert moved is not None and moved.completed
    assert moved.result_suffix.endswith("All 3 steps complete.")
    assert current_step(PLANS, moved.pointer) is None


def test_given_advance_policy_when_skipped_then_the_pointer_moves_and_records_it() -> None:
    outcome = skip_step(PLANS, start(), "no rows today")
    assert outcome.kind == "skipped" and outcome.policy == "advance"
    assert outcome.pointer == StepPointer(skill_id="etl", step=2, total=3, skipped=(1,))
    assert "skipped: no rows today" in outcome.text


def test_given_hold_policy_when_skipped_then_the_step_stays_current() -> None:
    plans = step_plans([stepped("hold")])
    pointer = rekey_pointer(plans, None, "etl")
    outcome = skip_step(plans, pointer, "blocked")
    assert outcome.kind == "skipped" and outcome.policy == "hold"
    assert outcome.pointer == pointer
    assert "still current" in outcome.text


@pytest.mark.parametrize("reason", ["", "   ", None, 7])
def test_given_an_empty_reason_when_skipped_then_it_teaches_and_emits_nothing(
    reason: object,
) -> None:
    outcome = skip_step(PLANS, start(), reason)
    assert outcome.kind == "teach" and outcome.pointer == start()
    assert "needs a reason" in outcome.text


def test_given_no_procedure_when_skipped_then_it_teaches() -> None:
    outcome = skip_step(PLANS, None, "why not")
    assert outcome.kind == "teach" and "nothing to skip" in outcome.text


def test_given_a_stepped_skill_when_read_then_the_suffix_names_step_one() -> None:
    assert read_skill_suffix(PLANS, "etl") == (
        " You are on step 1 of 3: load rows. Its tool: `load`.")
    assert read_skill_suffix(PLANS, "plain") == ""


def test_given_a_premature_final_when_decided_then_nudged_then_accepted_or_cut_short() -> None:
    pointer = StepPointer(skill_id="etl", step=2, total=3)
    first = decide_final(PLANS, pointer, limit_fired=False, already_nudged=False)
    assert first is not None and first.action == "nudged"
    assert [s.index for s in first.remaining] == [2, 3]
    assert first.nudge_text is not None and "`clean`" in first.nudge_text
    assert "`publish`" in first.nudge_text
    second = decide_final(PLANS, pointer, limit_fired=False, already_nudged=True)
    assert second is not None and second.action == "accepted" and second.nudge_text is None
    cut = decide_final(PLANS, pointer, limit_fired=True, already_nudged=False)
    assert cut is not None and cut.action == "cut-short"
    done = StepPointer(skill_id="etl", step=4, total=3)
    assert decide_final(PLANS, done, limit_fired=False, already_nudged=False) is None


def test_given_a_tool_named_skip_step_when_the_agent_builds_then_refused() -> None:
    with pytest.raises(ConfigError, match="'skip_step'"):
        check_steps_for_agent([stepped()], graph_mounted=True, tool_names=["skip_step"])


def test_given_steps_on_an_open_graph_skill_when_the_agent_builds_then_refused() -> None:
    with pytest.raises(ConfigError, match="open skill"):
        check_steps_for_agent([stepped()], graph_mounted=True, open_skill_ids={"etl"})
    assert "etl" in check_steps_for_agent([stepped()], graph_mounted=True)


def test_given_steps_on_a_non_llm_skill_without_graph_when_built_then_refused() -> None:
    from dataclasses import replace

    from footprint.injection import Always

    always = replace(stepped(), trigger=Always())
    with pytest.raises(ConfigError, match="'always'"):
        check_steps_for_agent([always], graph_mounted=False)
    assert check_steps_for_agent([define_instruction("i", prompt="x")],
                                 graph_mounted=False) == {}


def test_given_a_hand_built_plan_with_a_foreign_tool_when_folded_then_refused() -> None:
    from dataclasses import replace

    from footprint.injection._types import InjectionContent

    broken = replace(stepped(), inject=InjectionContent(system_prompt="b", tools=(tool("load"),)))
    with pytest.raises(ConfigError, match="'clean' is not one of the skill's own tools"):
        step_plans([broken])


@given(st.lists(st.sampled_from(["load", "clean", "publish", "skip", "other"]), max_size=12),
       st.booleans())
def test_given_any_call_sequence_when_run_then_the_pointer_stays_in_range(
    calls: list[str], hold: bool,
) -> None:
    plans = step_plans([stepped("hold" if hold else None)])
    plan: StepPlan = plans["etl"]
    pointer = rekey_pointer(plans, None, "etl")
    assert pointer is not None
    for call in calls:
        before = pointer.step
        if call == "skip":
            pointer = skip_step(plans, pointer, "r").pointer or pointer
        elif (moved := advance(plans, pointer, tool_name=call, clean=True)) is not None:
            pointer = moved.pointer
        assert before <= pointer.step <= plan.total + 1
        assert pointer.step - before <= 1
