"""Injection-engine figures: the cost of one evaluation pass.

``evaluate_1000_injections_us``: median microseconds for ``evaluate_injections``
over 1,000 mixed injections (always, rules, on-tool-return by name and by
regex, llm-activated skills, templated instructions) against one context.
Target: <= 1,000 µs.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable

from footprint.injection import (
    Injection,
    InjectionContext,
    OnToolReturn,
    ToolResult,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
    evaluate_injections,
)


def _rule(threshold: int) -> Callable[[InjectionContext], bool]:
    return lambda ctx: ctx.iteration > threshold


def build_injections(total: int = 1000) -> list[Injection]:
    """``total`` injections in a fixed mix: 20% always, 30% rule, 20% tool-return
    (a quarter of them regex), 20% llm-activated skills, 10% templated."""
    out: list[Injection] = []
    for n in range(total):
        slot = n % 10
        iid = f"inj_{n}"
        if slot in (0, 1):
            out.append(define_steering(iid, f"Steer {n}."))
        elif slot in (2, 3, 4):
            out.append(define_instruction(iid, prompt=f"Rule {n}.", active_when=_rule(n % 7)))
        elif slot in (5, 6):
            name: str | re.Pattern[str] = (
                re.compile(rf"^tool_{n % 13}") if n % 4 == 0 else f"tool_{n % 17}"
            )
            out.append(define_injection(iid, "custom", OnToolReturn(tool_name=name),
                                        system_prompt=f"After tool {n}."))
        elif slot in (7, 8):
            out.append(define_skill(iid, f"Skill {n}.", f"Do skill {n}."))
        else:
            out.append(define_instruction(
                iid, prompt_template="Action {{action}} of {{actionBudget}}; "
                                     "{{ actionsRemaining }} left."))
    return out


def build_context(injections: list[Injection]) -> InjectionContext:
    skills = [i.id for i in injections if i.flavor == "skill"]
    return InjectionContext(
        iteration=4,
        user_message="refund my order",
        max_iterations=10,
        tool_results=(
            ToolResult(tool_name="tool_3", result="{}", tool_call_id="c1"),
            ToolResult(tool_name="lookup_order", result="{}", tool_call_id="c2"),
            ToolResult(tool_name="tool_11", result="{}", tool_call_id="c3"),
        ),
        activated_injection_ids=tuple(skills[::10]),
    )


def median_us(repeats: int, total: int = 1000) -> float:
    injections = build_injections(total)
    ctx = build_context(injections)
    for _ in range(20):
        evaluate_injections(injections, ctx)
    samples: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(repeats):
        start = clock()
        evaluate_injections(injections, ctx)
        samples.append(clock() - start)
    return statistics.median(samples) / 1000.0


def figures(quick: bool) -> dict[str, float]:
    return {"evaluate_1000_injections_us": round(median_us(200 if quick else 2000), 1)}


if __name__ == "__main__":
    print(figures(quick=False))
