"""evaluate_injections and its readers: spec/engine.md §1.2-§1.3, §7 cases 1-3 and 28."""

from __future__ import annotations

import re
from dataclasses import dataclass

from footprint.events import SkippedInjection
from footprint.injection import (
    HistoryMessage,
    InjectedBy,
    Injection,
    InjectionContent,
    InjectionContext,
    OnToolReturn,
    Rule,
    ToolResult,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
    evaluate_injections,
    is_hidden_skill,
    said_by_person,
    summarize_evaluation,
    tool_results_of,
)


def ctx_at(iteration: int = 1, **kw: object) -> InjectionContext:
    return InjectionContext(iteration=iteration, user_message="hi", **kw)  # type: ignore[arg-type]


def ids(injections: tuple[Injection, ...]) -> list[str]:
    return [i.id for i in injections]


def on_tool(id: str, name: str | re.Pattern[str]) -> Injection:
    return define_injection(id, "custom", OnToolReturn(tool_name=name), system_prompt=id)


def boom(ctx: InjectionContext) -> bool:
    raise ValueError("boom")


# ── case 1: always and rules ──────────────────────────────────────────────


def test_given_always_and_rule_iteration_gt_5_when_at_1_and_10_then_rule_off_then_on() -> None:
    always = define_steering("always", "Be brief.")
    late = define_instruction("late", prompt="Wrap up.", active_when=lambda c: c.iteration > 5)
    early = evaluate_injections([always, late], ctx_at(1))
    later = evaluate_injections([always, late], ctx_at(10))
    assert ids(early.active) == ["always"]
    assert ids(later.active) == ["always", "late"]
    assert early.skipped == () and later.skipped == ()


def test_given_rule_returning_non_bool_when_evaluated_then_truthiness_decides() -> None:
    listy = define_instruction("listy", prompt="x", active_when=lambda c: [c.iteration])
    empty = define_instruction("empty", prompt="x", active_when=lambda c: "")
    result = evaluate_injections([listy, empty], ctx_at(3))
    assert ids(result.active) == ["listy"]
    assert result.skipped == ()


# ── case 2: predicate-threw ───────────────────────────────────────────────


def test_given_rule_raising_boom_when_evaluated_then_skipped_predicate_threw_not_raised() -> None:
    bad = define_instruction("bad", prompt="x", active_when=boom)
    result = evaluate_injections([bad], ctx_at(1))
    assert result.active == ()
    assert result.skipped == (SkippedInjection(id="bad", reason="predicate-threw", error="boom"),)


def test_given_predicate_whose_truth_value_raises_when_evaluated_then_predicate_threw() -> None:
    class Ambiguous:
        def __bool__(self) -> bool:
            raise TypeError("truth value is ambiguous")

    odd = define_instruction("odd", prompt="x", active_when=lambda c: Ambiguous())
    result = evaluate_injections([odd], ctx_at(1))
    assert result.skipped == (
        SkippedInjection(id="odd", reason="predicate-threw", error="truth value is ambiguous"),
    )


# ── case 3: on-tool-return and llm-activated ──────────────────────────────


def test_given_on_tool_return_weather_when_weather_returned_then_active_only_after() -> None:
    weather = on_tool("weather", "weather")
    before = evaluate_injections([weather], ctx_at(1))
    after = evaluate_injections(
        [weather], ctx_at(2, last_tool_result=ToolResult(tool_name="weather", result="sun"))
    )
    other = evaluate_injections(
        [weather], ctx_at(2, last_tool_result=ToolResult(tool_name="weather2", result="x"))
    )
    assert ids(before.active) == []
    assert ids(after.active) == ["weather"]
    assert ids(other.active) == []


def test_given_regex_read_prefix_when_read_user_returned_then_active() -> None:
    reader = on_tool("reader", re.compile(r"^read_"))
    hit = ctx_at(2, tool_results=(ToolResult(tool_name="read_user", result="{}"),))
    miss = ctx_at(2, tool_results=(ToolResult(tool_name="unread_user", result="{}"),))
    assert ids(evaluate_injections([reader], hit).active) == ["reader"]
    assert ids(evaluate_injections([reader], miss).active) == []


def test_given_batch_alpha_beta_when_evaluated_then_alpha_injection_active() -> None:
    alpha = on_tool("alpha", "alpha")
    gamma = on_tool("gamma", "gamma")
    batch = ctx_at(2, tool_results=(
        ToolResult(tool_name="alpha", result="1", tool_call_id="c1"),
        ToolResult(tool_name="beta", result="2", tool_call_id="c2"),
    ))
    assert ids(evaluate_injections([alpha, gamma], batch).active) == ["alpha"]


def test_given_llm_activated_skill_when_id_in_activated_ids_then_active_iff_listed() -> None:
    billing = define_skill("billing", "Billing questions.", "Check the invoice.")
    other = define_skill("other", "Other.", "Other body.")
    ctx = ctx_at(2, activated_injection_ids=("billing",))
    assert ids(evaluate_injections([billing, other], ctx).active) == ["billing"]
    assert ids(evaluate_injections([billing, other], ctx_at(2)).active) == []


# ── case 28: the context.evaluated summary ────────────────────────────────


def test_given_one_always_and_one_raising_instruction_when_summarized_then_counts_match() -> None:
    injections = [
        define_instruction("on", prompt="Always on."),
        define_instruction("raises", prompt="x", active_when=boom),
    ]
    summary = summarize_evaluation(injections, evaluate_injections(injections, ctx_at(1)))
    assert summary.evaluated_total == 2
    assert summary.active_count == 1
    assert summary.skipped_count == 1
    assert summary.kind_count("always") == 1
    assert summary.trigger_kind_counts == (("always", 1),)
    assert summary.active_ids == ("on",)


def test_given_skills_when_summarized_then_catalog_lists_visible_ones() -> None:
    billing = define_skill("billing", "Billing questions.", "body")
    bare = Injection(id="bare", flavor="skill", trigger=Rule(active_when=lambda c: True),
                     inject=InjectionContent(system_prompt="b"))
    secret = define_skill("secret", "Admin only.", "body")
    ctx = ctx_at(1, hidden_skill_ids=("secret",))
    injections = [billing, bare, secret]
    summary = summarize_evaluation(injections, evaluate_injections(injections, ctx))
    assert summary.skill_catalog == (("billing", "Billing questions."),
                                     ("bare", "(no description)"))
    assert summary.trigger_kind_counts == (("rule", 1),)


# ── every skip reason, and the order of the checks ────────────────────────


def test_given_parked_id_when_evaluated_then_skipped_parked_before_trigger_runs() -> None:
    calls: list[int] = []

    def counting(ctx: InjectionContext) -> bool:
        calls.append(ctx.iteration)
        return True

    rule = define_instruction("rule", prompt="x", active_when=counting)
    result = evaluate_injections([rule], ctx_at(1, parked_ids=("rule",)))
    assert [(s.id, s.reason) for s in result.skipped] == [("rule", "parked")]
    assert result.skipped[0].error is not None and "parked" in result.skipped[0].error
    assert calls == []


def test_given_hidden_parked_leased_activated_skill_when_evaluated_then_hidden_wins() -> None:
    secret = define_skill("secret", "Admin.", "Admin body.")
    ctx = ctx_at(2, hidden_skill_ids=("secret",), parked_ids=("secret",),
                 lease_active_ids=("secret",), activated_injection_ids=("secret",))
    result = evaluate_injections([secret], ctx)
    assert result.active == ()
    assert result.skipped == (SkippedInjection(id="secret", reason="hidden"),)
    assert is_hidden_skill(ctx, "secret") and not is_hidden_skill(ctx, "billing")
    assert not is_hidden_skill(ctx_at(1), "secret")


def test_given_hidden_id_on_non_skill_flavor_when_evaluated_then_it_is_not_hidden() -> None:
    steering = define_steering("secret", "Not a skill.")
    result = evaluate_injections([steering], ctx_at(1, hidden_skill_ids=("secret",)))
    assert ids(result.active) == ["secret"]


def test_given_leased_raising_rule_when_evaluated_then_admitted_without_running_trigger() -> None:
    leased = define_instruction("leased", prompt="Pushed.", active_when=boom)
    skill = define_skill("pushed_skill", "A skill.", "Body.")
    result = evaluate_injections([leased, skill],
                                 ctx_at(2, lease_active_ids=("leased", "pushed_skill")))
    assert ids(result.active) == ["leased", "pushed_skill"]
    assert result.skipped == ()


def test_given_unknown_trigger_kind_when_evaluated_then_skipped_with_unhandled_json() -> None:
    @dataclass(frozen=True)
    class Cron:
        schedule: str
        kind: str = "cron"

    weird = Injection(id="weird", flavor="custom", trigger=Cron("* * *"),  # type: ignore[arg-type]
                      inject=InjectionContent(system_prompt="x"))
    result = evaluate_injections([weird], ctx_at(1))
    assert result.active == ()
    (skip,) = result.skipped
    assert (skip.id, skip.reason) == ("weird", "unknown-trigger-kind")
    assert skip.error == 'Unhandled trigger: {"kind": "cron", "schedule": "* * *"}'


def test_given_template_without_max_iterations_when_evaluated_then_unknown_fact() -> None:
    budget = define_instruction(
        "budget", prompt_template="action {{action}} of {{actionBudget}}, "
                                  "{{actionsRemaining}} remain")
    result = evaluate_injections([budget], ctx_at(3))
    (skip,) = result.skipped
    assert (skip.id, skip.reason) == ("budget", "unknown-fact")
    assert skip.error is not None
    assert "{{actionBudget}}" in skip.error and "{{actionsRemaining}}" in skip.error
    assert "{{action}}," not in skip.error
    with_budget = evaluate_injections([budget], ctx_at(3, max_iterations=10))
    assert ids(with_budget.active) == ["budget"]


def test_given_pass1_and_pass2_skips_when_evaluated_then_unknown_fact_comes_after() -> None:
    tmpl = define_instruction("tmpl", prompt_template="{{actionBudget}} calls")
    bad = define_instruction("bad", prompt="x", active_when=boom)
    result = evaluate_injections([tmpl, bad], ctx_at(1))
    assert [(s.id, s.reason) for s in result.skipped] == [
        ("bad", "predicate-threw"), ("tmpl", "unknown-fact")]


def test_given_only_action_fact_when_no_budget_then_template_is_active() -> None:
    tmpl = define_instruction("tmpl", prompt_template="This is action {{ action }}.")
    assert ids(evaluate_injections([tmpl], ctx_at(1)).active) == ["tmpl"]


def test_given_entries_that_are_not_injections_when_evaluated_then_skipped_not_raised() -> None:
    good = define_steering("good", "ok")
    result = evaluate_injections([object(), good], ctx_at(1))  # type: ignore[list-item]
    assert ids(result.active) == ["good"]
    assert [s.reason for s in result.skipped] == ["unknown-trigger-kind"]


# ── readers: tool_results_of, said_by_person ──────────────────────────────


def test_given_tool_results_and_last_result_when_read_then_batch_wins_even_if_empty() -> None:
    last = ToolResult(tool_name="last", result="x")
    batch = (ToolResult(tool_name="a", result="1"), ToolResult(tool_name="b", result="2"))
    assert tool_results_of(ctx_at(2, tool_results=batch, last_tool_result=last)) == batch
    assert tool_results_of(ctx_at(2, tool_results=(), last_tool_result=last)) == ()
    assert tool_results_of(ctx_at(2, last_tool_result=last)) == (last,)
    assert tool_results_of(ctx_at(1)) == ()


def test_given_empty_batch_with_last_result_when_evaluated_then_on_tool_return_stays_off() -> None:
    weather = on_tool("weather", "weather")
    ctx = ctx_at(2, tool_results=(), last_tool_result=ToolResult(tool_name="weather", result="x"))
    assert evaluate_injections([weather], ctx).active == ()


def test_given_library_and_injected_messages_when_said_by_person_then_only_people() -> None:
    person = HistoryMessage(role="user", content="I want a refund")
    history = (
        person,
        HistoryMessage(role="assistant", content="refund started"),
        HistoryMessage(role="user", content="refund tool result dropped", library_written=True),
        HistoryMessage(role="user", content="refund policy: 30 days",
                       injected_by=InjectedBy(injection_id="policy", flavor="fact")),
        HistoryMessage(role="tool", content="refund ok", tool_name="refund"),
        HistoryMessage(role="user", content="thanks"),
    )
    ctx = ctx_at(3, history=history)
    said = said_by_person(ctx)
    assert [m.content for m in said] == ["I want a refund", "thanks"]
    mentions = define_instruction(
        "mentions", prompt="x",
        active_when=lambda c: any("policy" in m.content for m in said_by_person(c)))
    assert evaluate_injections([mentions], ctx).active == ()


def test_given_garbage_inputs_when_evaluated_then_returns_evaluation_without_raising() -> None:
    rule = define_instruction("rule", prompt="x", active_when=lambda c: c.iteration > 1)
    tmpl = define_instruction("tmpl", prompt_template="{{action}}")
    no_ctx = evaluate_injections([rule, tmpl], None)  # type: ignore[arg-type]
    assert [(s.id, s.reason) for s in no_ctx.skipped] == [
        ("rule", "predicate-threw"), ("tmpl", "unknown-fact")]
    assert evaluate_injections(42, ctx_at(1)).active == ()  # type: ignore[arg-type]
