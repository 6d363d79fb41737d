"""Skill-graph figures: the cost of one cursor advance plus one evaluation pass.

``cursor_200_skills_us``: median microseconds for ``explain_next_skill`` plus
``evaluate_injections`` over the compiled skills of a 200-skill graph with
400 guarded routes, against a context carrying a batch of 4 tool results.
Each pass uses a fresh ctx object (so nothing is served from the memo).
Target: <= 1,000 µs.
"""

from __future__ import annotations

import json
import statistics
import time

from footprint.graph import SkillGraph, skill_graph
from footprint.injection import InjectionContext, ToolResult, define_skill, evaluate_injections

SKILLS = 200
ROUTES = 400


def build_graph() -> SkillGraph:
    """200 skills; entry s0; each skill has 2 guarded routes to the next skills."""
    skills = [define_skill(f"s{n}", f"skill {n}", f"Body of skill {n}.") for n in range(SKILLS)]
    builder = skill_graph(*skills).entry(skills[0])
    for n in range(ROUTES):
        src = n % SKILLS
        dst = (src + 1 + n // SKILLS) % SKILLS
        builder.route(
            skills[src], skills[dst], on_tool_return=f"tool_{n % 4}",
            guard={"score": {"gte": 50 + n % 7}, "status": {"in": ["success", "partial"]}},
        )
    return builder.build(check="off")


def _context(cursor: str) -> InjectionContext:
    batch = tuple(
        ToolResult(tool_name=f"tool_{k}", result=json.dumps({"score": 40 + k}),
                   tool_call_id=f"call_{k}", status="success")
        for k in range(4)
    )
    return InjectionContext(iteration=3, user_message="route me", current_skill_id=cursor,
                            tool_results=batch, activated_injection_ids=("s0",))


def measure(graph: SkillGraph, rounds: int) -> float:
    """Median µs of one advance + evaluation, each on a fresh ctx."""
    samples: list[float] = []
    for r in range(rounds):
        ctx = _context(f"s{r % SKILLS}")
        start = time.perf_counter_ns()
        graph.explain_next_skill(ctx)
        evaluate_injections(graph.skills, ctx)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def figures(quick: bool) -> dict[str, float]:
    graph = build_graph()
    measure(graph, 50)  # warm up
    return {"cursor_200_skills_us": round(measure(graph, 300 if quick else 3000), 1)}


if __name__ == "__main__":
    print(figures(quick=False))
