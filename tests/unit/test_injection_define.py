"""The factories: shapes, cache defaults, metadata and every define-time refusal."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import pytest

from footprint import ConfigError
from footprint.injection import (
    Always,
    CacheUntil,
    InjectedMessage,
    LLMActivated,
    OnToolReturn,
    Rule,
    SkillStep,
    SkillTool,
    SkillToolSchema,
    define_fact,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
)


def tool(name: str) -> SkillTool:
    def run(args: Mapping[str, Any]) -> str:
        return name

    return SkillTool(schema=SkillToolSchema(name=name, description=f"{name} tool"), execute=run)


def refused(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ConfigError) as info:
        fn(*args, **kwargs)
    return str(info.value)


# ── case 4: template refusals ─────────────────────────────────────────────


def test_given_template_naming_foo_when_defined_then_refused_listing_three_facts() -> None:
    msg = refused(define_instruction, "t", prompt_template="Do {{foo}} now")
    assert "'{{foo}}'" in msg
    for fact in ("{{action}}", "{{actionBudget}}", "{{actionsRemaining}}"):
        assert fact in msg


def test_given_misspelled_fact_when_defined_then_error_suggests_the_fact() -> None:
    msg = refused(define_instruction, "t", prompt_template="{{actionsRemainig}} left")
    assert "did you mean 'actionsRemaining'" in msg


def test_given_malformed_placeholder_when_defined_then_refused() -> None:
    assert "'{{ action-budget }}'" in refused(
        define_instruction, "t", prompt_template="{{ action-budget }}")


def test_given_prompt_and_template_when_defined_then_refused_naming_both() -> None:
    msg = refused(define_instruction, "t", prompt="fixed", prompt_template="{{action}}")
    assert "'fixed'" in msg and "exactly one" in msg


@pytest.mark.parametrize("cache", ["always", "while-active"])
def test_given_template_with_cache_when_defined_then_refused(cache: str) -> None:
    msg = refused(define_instruction, "t", prompt_template="{{action}}", cache=cache)
    assert repr(cache) in msg and "cache='never'" in msg


def test_given_template_with_messages_slot_when_defined_then_refused() -> None:
    msg = refused(define_instruction, "t", prompt_template="{{action}}", slot="messages")
    assert "slot='messages'" in msg


def test_given_template_with_cache_never_when_defined_then_accepted_and_templated() -> None:
    inj = define_instruction("t", prompt_template="at {{ action }}", cache="never")
    assert inj.templated is True
    assert inj.inject.system_prompt == "at {{ action }}"


def test_given_template_without_placeholders_when_defined_then_not_templated() -> None:
    assert define_instruction("t", prompt_template="plain words").templated is False


# ── shapes and cache defaults ─────────────────────────────────────────────


def test_given_each_factory_when_defaults_used_then_flavor_trigger_and_cache_match_table() -> None:
    skill = define_skill("s", "Desc.", "Body.")
    steering = define_steering("st", "Steer.")
    instruction = define_instruction("i", prompt="Do.")
    fact = define_fact("f", "The sky is blue.")
    assert (skill.flavor, skill.trigger, skill.metadata["cache"]) == (
        "skill", LLMActivated(), "while-active")
    assert (steering.flavor, steering.trigger, steering.metadata["cache"]) == (
        "steering", Always(), "always")
    assert (instruction.flavor, instruction.trigger, instruction.metadata["cache"]) == (
        "instructions", Always(), "never")
    assert (fact.flavor, fact.trigger, fact.metadata["cache"]) == ("fact", Always(), "always")


def test_given_active_when_when_instruction_defined_then_rule_trigger() -> None:
    def pred(ctx: object) -> bool:
        return True

    inj = define_instruction("i", prompt="Do.", active_when=pred)
    assert inj.trigger == Rule(active_when=pred)


def test_given_messages_slot_when_defined_then_content_is_one_message_with_role() -> None:
    inj = define_instruction("i", prompt="Remember this.", slot="messages", role="assistant")
    assert inj.inject.system_prompt is None
    assert inj.inject.messages == (InjectedMessage(role="assistant", content="Remember this."),)


def test_given_injection_when_mutated_then_frozen_refuses() -> None:
    inj = define_steering("st", "Steer.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        inj.id = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        inj.metadata["cache"] = "never"  # type: ignore[index]


def test_given_json_fact_data_when_defined_then_rendered_with_sorted_keys() -> None:
    a = define_fact("f", {"b": 1, "a": [1, "x"], "c": {"z": True, "y": None}})
    b = define_fact("f", {"c": {"y": None, "z": True}, "a": [1, "x"], "b": 1})
    assert a.inject.system_prompt == b.inject.system_prompt
    assert a.inject.system_prompt == '{"a": [1, "x"], "b": 1, "c": {"y": null, "z": true}}'
    assert define_fact("n", 42).inject.system_prompt == "42"


@pytest.mark.parametrize("data", [None, "", "   ", {}, [], float("nan")])
def test_given_empty_or_invalid_fact_data_when_defined_then_refused(data: object) -> None:
    assert "define_fact(f)" in refused(define_fact, "f", data)


def test_given_unserialisable_fact_data_when_defined_then_refused_quoting_it() -> None:
    msg = refused(define_fact, "f", {"when": object})
    assert "not JSON" in msg and "object" in msg


# ── refusals common to every factory ──────────────────────────────────────


@pytest.mark.parametrize("bad_id", ["", "  ", None, 3])
def test_given_empty_or_non_string_id_when_defined_then_refused(bad_id: object) -> None:
    assert repr(bad_id) in refused(define_steering, bad_id, "Steer.")


def test_given_empty_prompt_when_instruction_defined_then_refused() -> None:
    assert "prompt is ''" in refused(define_instruction, "i", prompt="")
    assert "prompt is None" in refused(define_instruction, "i")


def test_given_role_tool_when_defined_then_refused_naming_roles() -> None:
    msg = refused(define_instruction, "i", prompt="x", slot="messages", role="tool")
    assert "role='tool'" in msg and "'user'" in msg


def test_given_tools_slot_when_instruction_defined_then_refused() -> None:
    assert "slot='tools'" in refused(define_instruction, "i", prompt="x", slot="tools")


def test_given_unknown_cache_form_when_defined_then_refused_listing_forms() -> None:
    msg = refused(define_steering, "st", "x", cache="sometimes")
    assert "'sometimes'" in msg and "CacheUntil" in msg


def test_given_cache_until_when_defined_then_kept() -> None:
    policy = CacheUntil(until=lambda c: c.iteration > 3)
    assert define_steering("st", "x", cache=policy).metadata["cache"] is policy


def test_given_non_callable_active_when_when_defined_then_refused() -> None:
    assert "not callable" in refused(define_instruction, "i", prompt="x", active_when="yes")


def test_given_custom_via_tool_name_when_generic_defined_then_refused() -> None:
    msg = refused(define_injection, "g", "custom", LLMActivated(via_tool_name="open_it"),
                  system_prompt="x")
    assert "'open_it'" in msg and "read_skill" in msg


def test_given_generic_injection_when_defined_then_flavor_cache_default_applies() -> None:
    rag = define_injection("r", "rag", OnToolReturn(tool_name=re.compile("^search")),
                           system_prompt="chunk")
    custom = define_injection("c", "custom", Always(), system_prompt="x")
    assert rag.metadata["cache"] == "while-active"
    assert custom.metadata["cache"] == "never"


def test_given_generic_injection_with_bad_parts_when_defined_then_each_refused() -> None:
    assert "'weird'" in refused(define_injection, "g", "weird", Always(), system_prompt="x")
    assert "contributes nothing" in refused(define_injection, "g", "custom", Always())
    assert "not a trigger" in refused(define_injection, "g", "custom", "always",
                                      system_prompt="x")
    assert "tool_name is ''" in refused(define_injection, "g", "custom",
                                        OnToolReturn(tool_name=""), system_prompt="x")
    msg = refused(define_injection, "g", "custom", Always(),
                  messages=[InjectedMessage(role="tool", content="x")])
    assert "role='tool'" in msg


# ── define_skill ──────────────────────────────────────────────────────────


def test_given_full_skill_when_defined_then_metadata_holds_snake_case_keys() -> None:
    steps = (SkillStep("fetch", "Fetch rows.", produces=("dataset/rows",)),
             SkillStep("render", "Draw it.", consumes=("dataset/rows",)))
    skill = define_skill(
        "charting", "Charts.", "Make charts.", tools=[tool("fetch"), tool("render")],
        surface_mode="both", auto_activate="currentSkill", steps=steps, on_skip="hold",
        produces=["chart/spec"], consumes=("dataset/rows",), model="small-model",
        title="Charting")
    meta = skill.metadata
    assert set(meta) == {"surface_mode", "auto_activate", "cache", "steps", "on_skip",
                         "produces", "consumes", "model"}
    assert meta["steps"] == steps and meta["on_skip"] == "hold"
    assert meta["produces"] == ("chart/spec",)
    assert skill.title == "Charting"
    assert [t.name for t in skill.inject.tools] == ["fetch", "render"]


def test_given_minimal_skill_when_defined_then_only_given_keys_present() -> None:
    assert dict(define_skill("s", "D.", "B.").metadata) == {
        "surface_mode": "auto", "cache": "while-active"}


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"description": ""}, "description is ''"),
    ({"body": "  "}, "body is '  '"),
    ({"surface_mode": "hidden"}, "surface_mode='hidden'"),
    ({"auto_activate": "always"}, "auto_activate='always'"),
    ({"model": ""}, "model=''"),
    ({"provider": "openai"}, "provider='openai'"),
    ({"tools": ["fetch"]}, "tools[0] is 'fetch'"),
    ({"title": ""}, "title is ''"),
])
def test_given_bad_skill_field_when_defined_then_refused(kwargs: dict[str, Any],
                                                         needle: str) -> None:
    base: dict[str, Any] = {"id": "s", "description": "D.", "body": "B."}
    msg = refused(define_skill, **{**base, **kwargs})
    assert msg.startswith("define_skill(s)") and needle in msg


def test_given_duplicate_tool_names_when_skill_defined_then_refused() -> None:
    assert "'fetch'" in refused(define_skill, "s", "D.", "B.", tools=[tool("fetch")] * 2)


# §2.9 refused at definition


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"on_skip": "hold"}, "on_skip='hold' without steps"),
    ({"steps": [], "tools": [tool("a")]}, "steps=[]"),
    ({"steps": [SkillStep("a", "n")]}, "steps need tools"),
    ({"steps": [SkillStep(" ", "n")], "tools": [tool("a")]}, "step 1: tool is ' '"),
    ({"steps": [SkillStep("a", "")], "tools": [tool("a")]}, "step 1: note is ''"),
    ({"steps": [SkillStep("a", "n"), SkillStep("b", "n")], "tools": [tool("a")]},
     "step 2: tool 'b' is not one of this skill's tools"),
    ({"steps": [SkillStep("a", "n")], "tools": [tool("a")], "on_skip": "maybe"},
     "on_skip='maybe'"),
])
def test_given_bad_steps_when_skill_defined_then_refused(kwargs: dict[str, Any],
                                                         needle: str) -> None:
    msg = refused(define_skill, "s", "D.", "B.", **kwargs)
    assert msg.startswith("define_skill(s)") and needle in msg


def test_given_repeated_step_tool_and_mapping_step_when_defined_then_accepted() -> None:
    skill = define_skill("s", "D.", "B.", tools=[tool("a")],
                         steps=[SkillStep("a", "first"), {"tool": "a", "note": "again"}])
    assert skill.metadata["steps"] == (SkillStep("a", "first"), SkillStep("a", "again"))
    assert skill.metadata["on_skip"] == "advance"


# §4 vocabulary refused at definition


@pytest.mark.parametrize(("kinds", "needle"), [
    ("dataset/rows", "must be a list"),
    ([], "produces=[]"),
    ([3], "contains 3"),
    (["  "], "contains '  '"),
    (["a/b", "a/b"], "lists 'a/b' twice"),
])
def test_given_bad_vocabulary_when_skill_defined_then_refused_naming_skill(
    kinds: object, needle: str
) -> None:
    msg = refused(define_skill, "s", "D.", "B.", produces=kinds)
    assert msg.startswith("define_skill(s): produces") and needle in msg


def test_given_bad_step_vocabulary_when_skill_defined_then_message_names_the_step() -> None:
    msg = refused(define_skill, "s", "D.", "B.", tools=[tool("a")],
                  steps=[SkillStep("a", "ok"), SkillStep("a", "n", consumes=("k", "k"))])
    assert msg.startswith("define_skill(s) step 2: consumes") and "'k' twice" in msg
