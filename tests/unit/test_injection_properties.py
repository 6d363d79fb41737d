"""Property tests: evaluate_injections over arbitrary injection sets and contexts."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from footprint.injection import (
    FLAVORS,
    Always,
    Injection,
    InjectionContent,
    InjectionContext,
    InjectionEvaluation,
    LLMActivated,
    OnToolReturn,
    Rule,
    ToolResult,
    define_instruction,
    evaluate_injections,
    project_active_injection,
    render_template,
)

TOOL_NAMES = ["weather", "read_user", "alpha", "beta", "", "ünï"]
PROMPTS = [
    None, "", "plain", "at {{action}}", "{{ actionBudget }} total",
    "{{actionsRemaining}} left of {{actionBudget}}", "{{mood}} {{action}}", "{{a-b}}",
]


class Ambiguous:
    def __bool__(self) -> bool:
        raise ValueError("ambiguous")


def _raise(ctx: InjectionContext) -> object:
    raise RuntimeError("boom")


PREDICATES: list[Callable[[InjectionContext], object]] = [
    lambda c: True,
    lambda c: False,
    lambda c: c.iteration % 2,
    lambda c: None,
    lambda c: [c.user_message],
    lambda c: Ambiguous(),
    _raise,
    lambda c: 1 / 0,
]

triggers = st.one_of(
    st.just(Always()),
    st.just(LLMActivated()),
    st.builds(lambda p: Rule(active_when=p), st.sampled_from(PREDICATES)),
    st.builds(lambda n: OnToolReturn(tool_name=n), st.sampled_from(TOOL_NAMES)),
    st.builds(lambda r: OnToolReturn(tool_name=re.compile(r)),
              st.sampled_from([r"^read_", r"a", r"^$", r"x+y"])),
    st.sampled_from([None, "always", {"kind": "cron"}, 42]),
)


@st.composite
def injection_sets(draw: st.DrawFn) -> list[Injection]:
    ids = draw(st.lists(st.text("abcxyz_", min_size=1, max_size=3), unique=True, max_size=12))
    out: list[Injection] = []
    for iid in ids:
        out.append(Injection(
            id=iid,
            flavor=draw(st.sampled_from(FLAVORS)),
            trigger=draw(triggers),
            inject=InjectionContent(system_prompt=draw(st.sampled_from(PROMPTS))),
            templated=draw(st.booleans()),
        ))
    return out


def subsets(pool: list[str]) -> st.SearchStrategy[tuple[str, ...] | None]:
    noise = st.text("abcxyz_", min_size=1, max_size=3)
    items = st.sampled_from(pool) | noise if pool else noise
    return st.none() | st.lists(items, max_size=6).map(tuple)


results = st.builds(
    lambda n, r: ToolResult(tool_name=n, result=r),
    st.sampled_from(TOOL_NAMES) | st.text(max_size=5), st.text(max_size=5),
)


@st.composite
def contexts(draw: st.DrawFn, pool: list[str]) -> InjectionContext:
    return InjectionContext(
        iteration=draw(st.integers(min_value=-2, max_value=40)),
        user_message=draw(st.text(max_size=10)),
        max_iterations=draw(st.none() | st.integers(min_value=0, max_value=40)),
        last_tool_result=draw(st.none() | results),
        tool_results=draw(st.none() | st.lists(results, max_size=4).map(tuple)),
        activated_injection_ids=draw(subsets(pool).map(lambda ids: ids or ())),
        lease_active_ids=draw(subsets(pool)),
        parked_ids=draw(subsets(pool)),
        hidden_skill_ids=draw(subsets(pool)),
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Injection], InjectionContext, InjectionEvaluation]:
    injections = draw(injection_sets())
    ctx = draw(contexts([i.id for i in injections]))
    return injections, ctx, evaluate_injections(injections, ctx)


def _positions(injections: list[Injection], ids: list[str]) -> list[int]:
    order = {inj.id: n for n, inj in enumerate(injections)}
    return [order[i] for i in ids]


@given(cases())
def test_given_any_set_and_context_when_evaluated_then_no_id_is_both_active_and_skipped(
    case: tuple[list[Injection], InjectionContext, InjectionEvaluation],
) -> None:
    injections, _, result = case
    active = [i.id for i in result.active]
    skipped = [s.id for s in result.skipped]
    assert not set(active) & set(skipped)
    assert len(active) == len(set(active)) and len(skipped) == len(set(skipped))
    assert set(active) | set(skipped) <= {i.id for i in injections}


@given(cases())
def test_given_any_set_and_context_when_evaluated_then_hidden_skill_never_active(
    case: tuple[list[Injection], InjectionContext, InjectionEvaluation],
) -> None:
    injections, ctx, result = case
    hidden = set(ctx.hidden_skill_ids or ())
    assert not any(i.flavor == "skill" and i.id in hidden for i in result.active)
    expected = [i.id for i in injections if i.flavor == "skill" and i.id in hidden]
    assert [s.id for s in result.skipped if s.reason == "hidden"] == expected


@given(cases())
def test_given_any_set_and_context_when_evaluated_then_each_list_keeps_declaration_order(
    case: tuple[list[Injection], InjectionContext, InjectionEvaluation],
) -> None:
    injections, _, result = case
    active = _positions(injections, [i.id for i in result.active])
    first = _positions(injections, [s.id for s in result.skipped if s.reason != "unknown-fact"])
    second = _positions(injections, [s.id for s in result.skipped if s.reason == "unknown-fact"])
    assert active == sorted(active)
    assert first == sorted(first) and second == sorted(second)
    reasons = [s.reason for s in result.skipped]
    assert reasons == sorted(reasons, key=lambda r: r == "unknown-fact")


@given(cases())
def test_given_any_set_and_context_when_evaluated_twice_then_same_verdicts(
    case: tuple[list[Injection], InjectionContext, InjectionEvaluation],
) -> None:
    injections, ctx, result = case
    assert evaluate_injections(injections, ctx) == result


@given(cases())
def test_given_any_active_injection_when_projected_with_ctx_then_no_placeholder_reaches_model(
    case: tuple[list[Injection], InjectionContext, InjectionEvaluation],
) -> None:
    _, ctx, result = case
    for inj in result.active:
        text = project_active_injection(inj, ctx).inject.system_prompt
        if inj.templated and text is not None:
            assert re.search(r"\{\{.*?\}\}", text, re.DOTALL) is None, text


@given(st.lists(st.sampled_from(["action", "actionBudget", "actionsRemaining"]), min_size=1),
       st.text(alphabet="ab }", max_size=8), st.integers(-5, 50), st.none() | st.integers(0, 50))
def test_given_factory_template_when_rendered_then_all_or_nothing(
    names: list[str], filler: str, iteration: int, budget: int | None
) -> None:
    text = filler + "".join(f" {{{{ {n} }}}}" for n in names)
    inj = define_instruction("t", prompt_template=text)
    ctx = InjectionContext(iteration=iteration, user_message="", max_iterations=budget)
    rendered = render_template(text, ctx)
    needs_budget = any(n != "action" for n in names)
    if budget is None and needs_budget:
        assert rendered is None
        assert [s.reason for s in evaluate_injections([inj], ctx).skipped] == ["unknown-fact"]
    else:
        values = {"action": iteration, "actionBudget": budget,
                  "actionsRemaining": None if budget is None else max(0, budget - iteration)}
        assert rendered == filler + "".join(f" {values[n]}" for n in names)
        assert evaluate_injections([inj], ctx).active == (inj,)
