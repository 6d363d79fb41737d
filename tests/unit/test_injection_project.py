"""Templates, projection, cache policy and leases: spec/engine.md §1.4, §7 case 5."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from footprint.injection import (
    ActiveContent,
    ActiveInjection,
    CacheContext,
    CacheUntil,
    InjectedMessage,
    Injection,
    InjectionContent,
    InjectionContext,
    Lease,
    LeaseRefusal,
    ProjectedTool,
    Rule,
    SkillTool,
    SkillToolSchema,
    define_instruction,
    define_skill,
    grant_lease,
    is_cacheable,
    lease_active_ids,
    lease_tenant,
    project_active_injection,
    render_template,
)

TEMPLATE = "action {{action}} of {{actionBudget}}, {{actionsRemaining}} remain"


def ctx(iteration: int, max_iterations: int | None = None) -> InjectionContext:
    return InjectionContext(iteration=iteration, user_message="", max_iterations=max_iterations)


def budget() -> Injection:
    return define_instruction("budget", prompt_template=TEMPLATE)


# ── case 5: rendering ─────────────────────────────────────────────────────


def test_given_iteration_25_of_30_when_projected_then_prompt_says_5_remain() -> None:
    active = project_active_injection(budget(), ctx(25, 30))
    assert active.inject.system_prompt == "action 25 of 30, 5 remain"


def test_given_wrap_up_call_31_of_30_when_projected_then_0_remain() -> None:
    active = project_active_injection(budget(), ctx(31, 30))
    assert active.inject.system_prompt == "action 31 of 30, 0 remain"


def test_given_no_ctx_when_templated_projected_then_no_system_prompt() -> None:
    active = project_active_injection(budget())
    assert active.inject.system_prompt is None


def test_given_ctx_without_budget_when_templated_projected_then_no_system_prompt() -> None:
    assert project_active_injection(budget(), ctx(3)).inject.system_prompt is None


def test_given_spaced_placeholders_when_rendered_then_all_filled() -> None:
    assert render_template("{{ action }}/{{actionBudget  }}", ctx(2, 9)) == "2/9"


def test_given_hand_built_template_with_unknown_fact_when_projected_then_omitted() -> None:
    odd = Injection(id="odd", flavor="instructions", trigger=Rule(active_when=lambda c: True),
                    inject=InjectionContent(system_prompt="{{action}} and {{mood}}"),
                    templated=True)
    assert project_active_injection(odd, ctx(1, 5)).inject.system_prompt is None


def test_given_plain_prompt_with_braces_when_projected_then_text_kept_as_written() -> None:
    plain = define_instruction("p", prompt="Use {{placeholders}} in your own templates.")
    active = project_active_injection(plain, ctx(1))
    assert active.inject.system_prompt == "Use {{placeholders}} in your own templates."


# ── projection copies only the listed fields ──────────────────────────────


def _tool(name: str) -> SkillTool:
    def run(args: Mapping[str, Any]) -> str:
        return "secret result"

    return SkillTool(schema=SkillToolSchema(name=name, description="d"), execute=run)


def test_given_skill_with_tools_when_projected_then_schemas_only_no_execute() -> None:
    skill = define_skill("billing", "Billing.", "Check invoices.", tools=[_tool("lookup")],
                         surface_mode="tool-only", auto_activate="currentSkill",
                         model="m", title="Billing desk")
    active = project_active_injection(skill)
    assert active == ActiveInjection(
        id="billing", flavor="skill", description="Billing.", surface_mode="tool-only",
        auto_activate="currentSkill", cache="while-active",
        inject=ActiveContent(
            system_prompt="Check invoices.",
            tools=(ProjectedTool(schema=skill.inject.tools[0].schema, injection_id="billing"),),
        ),
    )
    names = {f.name for f in dataclasses.fields(ProjectedTool)}
    assert "execute" not in names
    assert not any(callable(getattr(t, "execute", None)) for t in active.inject.tools)


def test_given_messages_and_no_metadata_when_projected_then_messages_kept_cache_absent() -> None:
    msg = InjectedMessage(role="user", content="Remember: EU customer.")
    bare = Injection(id="m", flavor="memory", trigger=Rule(active_when=lambda c: True),
                     inject=InjectionContent(messages=(msg,)), description="")
    active = project_active_injection(bare)
    assert active.inject.messages == (msg,)
    assert active.cache is None and active.description is None
    assert active.surface_mode is None and active.retrieval is None
    assert active.inject.system_prompt is None


def test_given_projection_when_walked_then_no_callable_anywhere() -> None:
    skill = define_skill("s", "D.", "B.", tools=[_tool("t")])
    seen: list[str] = []

    def walk(value: object) -> None:
        assert not callable(value), value
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                seen.append(f.name)
                walk(getattr(value, f.name))
        elif isinstance(value, Mapping):
            for v in value.values():
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)

    walk(project_active_injection(skill))
    assert "schema" in seen and "execute" not in seen


# ── cache policy ──────────────────────────────────────────────────────────


CACHE_CTX = CacheContext(iteration=3, iterations_remaining=7, user_message="hi",
                         cumulative_input_tokens=1200, last_tool_name="lookup")


def test_given_named_policies_when_checked_then_always_and_while_active_cache() -> None:
    assert is_cacheable("always", CACHE_CTX) is True
    assert is_cacheable("while-active", CACHE_CTX) is True
    assert is_cacheable("never", CACHE_CTX) is False
    assert is_cacheable("sometimes", CACHE_CTX) is False
    assert is_cacheable(None, CACHE_CTX) is False


def test_given_until_policy_when_checked_then_cacheable_until_predicate_true() -> None:
    until_five = CacheUntil(until=lambda c: c.iteration >= 5)
    assert is_cacheable(until_five, CACHE_CTX) is True
    assert is_cacheable(until_five, dataclasses.replace(CACHE_CTX, iteration=5)) is False


def test_given_raising_until_when_checked_then_not_cacheable() -> None:
    def broken(c: CacheContext) -> bool:
        raise RuntimeError("no")

    assert is_cacheable(CacheUntil(until=broken), CACHE_CTX) is False


# ── leases ────────────────────────────────────────────────────────────────


def _injections() -> list[Injection]:
    return [
        define_instruction("refund_policy", prompt="Refunds within 30 days."),
        define_skill("hidden_body", "D.", "B.", surface_mode="tool-only"),
    ]


def test_given_known_instruction_when_lease_granted_then_lease_records_tenant() -> None:
    grant = grant_lease(instruction_id="refund_policy", delivery_lease="next-call",
                        injections=_injections(), tenant="billing", iteration=3)
    assert grant == Lease(instruction_id="refund_policy", delivery_lease="next-call",
                          skill_id="billing", iteration=3)


def test_given_unknown_id_when_lease_requested_then_refused_with_suggestion() -> None:
    refusal = grant_lease(instruction_id="refund_polcy", delivery_lease="next-call",
                          injections=_injections(), tenant=None, iteration=1)
    assert isinstance(refusal, LeaseRefusal) and refusal.reason == "unknown-id"
    assert "did you mean 'refund_policy'" in refusal.note


@pytest.mark.parametrize(("target", "lease", "reason"), [
    ("hidden_body", "next-call", "tool-only-target"),
    ("refund_policy", "forever", "bad-delivery-lease"),
])
def test_given_unservable_lease_when_requested_then_refused(target: str, lease: str,
                                                            reason: str) -> None:
    refusal = grant_lease(instruction_id=target, delivery_lease=lease,
                          injections=_injections(), tenant="s", iteration=1)
    assert isinstance(refusal, LeaseRefusal) and refusal.reason == reason


def test_given_next_call_lease_when_passes_run_then_live_once_then_pruned() -> None:
    lease = Lease(instruction_id="p", delivery_lease="next-call", skill_id="a", iteration=3)
    live, kept = lease_active_ids([lease], iteration=4, tenant="a")
    assert live == ("p",) and kept == ()
    assert lease_active_ids([lease], iteration=5, tenant="a") == ((), ())


def test_given_until_skill_exit_when_tenant_changes_then_dies_and_never_revives() -> None:
    lease = Lease(instruction_id="p", delivery_lease="until-skill-exit", skill_id="a",
                  iteration=2)
    live, kept = lease_active_ids([lease], iteration=3, tenant="a")
    assert live == ("p",) and kept == (lease,)
    live, kept = lease_active_ids(kept, iteration=4, tenant="b")
    assert live == () and kept == ()
    assert lease_active_ids(kept, iteration=5, tenant="a") == ((), ())


def test_given_two_leases_for_one_id_when_live_then_id_listed_once() -> None:
    a = Lease(instruction_id="p", delivery_lease="next-call", skill_id=None, iteration=1)
    b = Lease(instruction_id="p", delivery_lease="until-skill-exit", skill_id="s", iteration=1)
    live, kept = lease_active_ids([a, b], iteration=2, tenant="s")
    assert live == ("p",) and kept == (b,)


def test_given_cursor_or_activated_ids_when_tenant_asked_then_cursor_first() -> None:
    assert lease_tenant("cur", ("x", "y")) == "cur"
    assert lease_tenant(None, ("x", "y")) == "y"
    assert lease_tenant(None, ()) is None
