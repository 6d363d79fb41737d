"""Why v3 beyond the planted examples: factories, --expect by facts, the blind flag's
remedy, and a server that dropped part of the prompt."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from planted_support import load

from footprint import (
    Agent,
    FunctionModel,
    ListSink,
    SeededIds,
    StepClock,
    define_fact,
    define_steering,
)
from footprint.events import EventSink
from footprint.providers import LLMRequest, LLMResponse, Reply, Usage
from lens import why
from lens.explain._report import render_why


def _review(request: LLMRequest) -> Reply:
    moved = "moved to 13:00" in request.system
    return f"The review is at {'1 pm' if moved else '11 am'} on Thursday."


def _review_agent(*, sink: EventSink | None = None, seed: int = 0) -> Agent:
    return Agent(provider=FunctionModel(_review), model="m", clock=StepClock(), seed=seed,
                 sink=sink, injections=[
                     define_steering("voice", "Give the day and the time."),
                     define_fact("memo", "The review moved to 13:00."),
                 ])


def _recorded(make: Any, message: str = "When is the review?") -> tuple[list[Any], str]:
    sink = ListSink()
    run = make(sink=sink).variant(ids=SeededIds(7)).run_sync(message)  # a fixed run id
    return list(sink.events), run.run_id


def test_given_a_factory_when_lens_why_runs_then_it_builds_the_agent_per_seed() -> None:
    module = load("seed_wording")
    events, run_id = _recorded(module.make_agent, module.MESSAGE)
    report = why(events, run_id, agent=module.make_agent)
    assert report.mode == "CAUSAL" and report.comparator_mode == "facts"
    assert report.root_causes == ("fact 'room-memo'",)
    assert report.baseline is not None and report.baseline.stable


def test_given_expect_a_time_when_the_fix_words_it_otherwise_then_the_culprit_is_confirmed(
) -> None:
    events, run_id = _recorded(_review_agent)
    report = why(events, run_id, agent=_review_agent(), expect="11:00")
    memo = next(s for s in report.suspects if s.id == "memo")
    assert memo.verdict == "confirmed" and memo.effect == "value"
    text = "\n".join(render_why(report))
    memo_line = next(line for line in text.splitlines() if "without 'memo'" in line)
    assert "the outcome held" not in memo_line
    assert not [f for f in report.flags if f.startswith("comparator-blind")]


def test_given_expect_when_no_re_run_hides_a_fact_change_then_no_blind_flag_is_raised() -> None:
    module = load("wrong_fact")
    events, run_id = _recorded(module.make_agent, module.MESSAGE)
    report = why(events, run_id, agent=module.make_agent(), expect="149 EUR")
    assert report.root_causes == ("fact 'supplier-memo'",)
    assert not [f for f in report.flags if f.startswith("comparator-blind")]


def test_given_a_judge_that_misses_a_price_when_why_runs_then_the_remedy_names_the_judge(
) -> None:
    module = load("wrong_fact")
    events, run_id = _recorded(module.make_agent, module.MESSAGE)

    def always_ok(answer: str) -> str:
        return "ok"

    report = why(events, run_id, agent=module.make_agent(), judge=always_ok)
    blind = [f for f in report.flags if f.startswith("comparator-blind")]
    assert blind and "judge" in blind[0] and "--label" not in blind[0]
    assert "189 EUR → 149 EUR" in blind[0]


class _Truncating:
    """A server whose chat template drops the system message: 18 input tokens recorded."""

    name = "truncating"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(content="The review is at 11 am.", usage=Usage(input_tokens=18,
                                                                          output_tokens=8))


def test_given_input_tokens_far_below_the_prompt_when_explained_then_a_flag_says_so() -> None:
    sink = ListSink()
    long_fact = "Reviews happen in room 4B; bring the printed agenda and the quarterly numbers."
    agent = Agent(provider=_Truncating(), model="m", clock=StepClock(), sink=sink,
                  system_prompt="You are the team's calendar assistant. " * 6,
                  injections=[define_fact("rooms", long_fact)])
    run = agent.run_sync("When is the review?")
    report = why(list(sink.events), run.run_id)
    dropped = [f for f in report.flags if f.startswith("prompt-dropped")]
    assert dropped and "18 input tokens" in dropped[0] and "llm#1" in dropped[0]
    assert not [f for f in why(*_recorded(_review_agent)).flags
                if f.startswith("prompt-dropped")]


def _hear(log: list[str]) -> Callable[[int, int | None, str], None]:
    def progress(_done: int, _total: int | None, what: str) -> None:
        log.append(what)

    return progress


def test_given_a_culprit_when_confirmed_then_baseline_re_runs_interleave_in_a_seeded_order(
) -> None:
    module = load("wrong_fact")
    events, run_id = _recorded(module.make_agent, module.MESSAGE)
    heard: list[list[str]] = [[], []]
    for log in heard:
        why(events, run_id, agent=module.make_agent(), progress=_hear(log))
    assert heard[0] == heard[1], "the interleaved order is not reproducible"
    confirm = [w for w in heard[0] if w.startswith("confirm") or "interleaved" in w]
    variant = [i for i, w in enumerate(confirm) if w.startswith("confirm")]
    paired = [i for i, w in enumerate(confirm) if "interleaved" in w]
    assert len(variant) == len(paired) > 0
    assert all(abs(v - p) == 1 for v, p in zip(variant, paired, strict=True))
    rng = random.Random(run_id)  # the documented order: shuffled, seeded by the run id
    expected = []
    for _ in variant:
        arms = ["confirm", "baseline"]
        rng.shuffle(arms)
        expected += arms
    assert ["confirm" if w.startswith("confirm") else "baseline" for w in confirm] == expected


def test_given_a_factory_when_ablations_call_the_model_live_then_the_seeds_own_model_answers(
) -> None:
    module = load("wrong_fact")
    served: dict[int, int] = {}

    def make_agent(*, sink: EventSink | None = None, seed: int = 0) -> Agent:
        def model(request: LLMRequest) -> Reply:
            served[seed] = served.get(seed, 0) + 1
            return module.model(request)

        return module.make_agent(sink=sink, seed=seed).variant(
            provider=FunctionModel(model, name="planted-shop"))

    events, run_id = _recorded(make_agent, module.MESSAGE)
    served.clear()
    report = why(events, run_id, agent=make_agent)
    assert report.root_causes == ("fact 'supplier-memo'",)
    screens = [s for s in served if s >= 1000]  # the search's screening seeds (ablations)
    assert screens and set(range(12)) <= set(served), sorted(served)
