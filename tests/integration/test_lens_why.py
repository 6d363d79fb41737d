"""`footprint why`: the custody walk ranks suspects; only counterfactual re-runs convict."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint import Agent, FunctionModel, define_fact
from footprint.agent import StepClock
from footprint.events import EventSink, ListSink
from footprint.providers import LLMRequest
from lens import _cmd_why
from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens._stream import label_of
from lens._why import why
from recorder import ParquetSink, Recorder

DESK = "lens._examples.support_desk:make_agent"
CAUSAL_WORDS = re.compile(r"\b(caus\w*|confirm\w*|prov\w*|because)\b", re.IGNORECASE)
DECOYS = ("refund-policy", "shipping-times", "support-hours", "tone", "calm-angry-customer")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("why") / "store"
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        make_agent(sink=recorder).answer()
    finally:
        recorder.close()
    return path


def _why(store: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser()
    _cmd_why.add_parser(parser.add_subparsers(dest="command"))
    return _cmd_why.run(parser.parse_args(["why", "last", "--store", str(store), *argv]))


def _report(store: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert _why(store, "--json", *argv) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _verdicts(report: dict[str, Any]) -> dict[str, str | None]:
    return {s["id"]: s["verdict"] for s in report["suspects"] if s["kind"] == "injection"}


def test_given_a_runner_when_why_re_runs_then_the_planted_fact_alone_is_confirmed(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert _why(store, "--agent", DESK, "--seeds", "2", "--top", "3") == 0
    out, err = capsys.readouterr()
    assert "mode: CAUSAL" in out
    assert "baseline: APPROVED in 2/2 seeded re-runs of the unchanged agent" in out
    fact = out[out.index(f"fact '{PLANTED_FACT}'"):]
    assert fact.splitlines()[2].strip() == (
        "→ CAUSAL 2/2 — removing it changed the outcome APPROVED → DECLINED in 2/2 seeded "
        "re-runs (confirmed)")
    assert "not-removable: skill 'refund'" in out and "is a skill of the graph" in out
    assert "why: re-run 1/8 · baseline · seed 0" in err
    assert "why: re-run 8/8 · without" in err


def test_given_a_runner_when_reported_as_json_then_decoys_are_not_confirmed(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    report = _report(store, capsys, "--agent", DESK, "--seeds", "2", "--top", "5")
    assert report["mode"] == "CAUSAL" and report["outcome"] == "APPROVED"
    assert report["baseline"] == {"outcomes": ["APPROVED", "APPROVED"], "stable": True}
    verdicts = _verdicts(report)
    assert verdicts[PLANTED_FACT] == "confirmed"
    tested = [d for d in DECOYS if verdicts.get(d) is not None]
    assert len(tested) == 4
    assert all(verdicts[d] == "not-confirmed" for d in tested)
    fact = next(s for s in report["suspects"] if s["id"] == PLANTED_FACT)
    assert (fact["flips"], fact["runs"], fact["outcomes"]) == (2, 2, ["DECLINED", "DECLINED"])


def test_given_no_runner_when_why_explains_then_it_is_correlational_with_no_causal_words(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert _why(store) == 0
    out = capsys.readouterr().out
    assert "mode: CORRELATIONAL" in out and "⚠ no-runner" in out
    assert CAUSAL_WORDS.search(out) is None, CAUSAL_WORDS.search(out)
    assert f"fact '{PLANTED_FACT}'" in out and "LANDED system-prompt" in out
    assert "tool check_eligibility" in out and "READ as message" in out
    report = _report(store, capsys)
    assert report["mode"] == "CORRELATIONAL" and report["baseline"] is None
    assert all(s["verdict"] is None for s in report["suspects"])
    scores = [s["score"] for s in report["suspects"]]
    assert scores == sorted(scores, reverse=True)


def test_given_an_earlier_step_when_explained_then_its_tool_pick_is_the_outcome(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    report = _report(store, capsys, "--step", "llm#4", "--agent", DESK, "--seeds", "2",
                     "--top", "6")
    assert report["step"] == "llm#4" and report["outcome"] == "issue_refund"
    assert report["answer"] == 'issue_refund({"amount": 40, "order_id": "A-1047"})'
    verdicts = _verdicts(report)
    assert verdicts[PLANTED_FACT] == "confirmed"
    assert {verdicts[d] for d in DECOYS} == {"not-confirmed"}


def test_given_an_unknown_step_when_explained_then_it_exits_2_suggesting_a_call(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert _why(store, "--step", "llm#44") == 2
    assert "did you mean 'llm#4'" in capsys.readouterr().err


# ── an unstable baseline ──────────────────────────────────────────────────


def _answer_for(seed: int) -> FunctionModel:
    def answer(request: LLMRequest) -> str:
        return "APPROVED: fine." if seed % 2 == 0 else "DECLINED: not fine."
    return FunctionModel(answer)


class SeedSensitive(Agent):
    """An agent whose model answers by the seed it was built with (an unstable baseline)."""

    def variant(self, **overrides: Any) -> Agent:
        options = {**self._options, **overrides}
        options["provider"] = _answer_for(options["seed"])
        return SeedSensitive(**options)


def make_flaky(sink: EventSink | None = None, seed: int = 0) -> Agent:
    return SeedSensitive(provider=_answer_for(seed), model="m", clock=StepClock(), seed=seed,
                         sink=sink, injections=[define_fact("policy", "Refunds: 30 days."),
                                                define_fact("memo", "Refunds: 60 days.")])


def test_given_a_seed_sensitive_model_when_why_re_runs_then_every_verdict_is_inconclusive(
) -> None:
    sink = ListSink()
    make_flaky(sink=sink).run_sync("refund please")
    report = why(sink.events, agent=make_flaky(), seeds=2, top=2)  # type: ignore[arg-type]
    assert report.mode == "CAUSAL"
    assert report.baseline is not None and not report.baseline.stable
    assert report.baseline.outcomes == ("APPROVED", "DECLINED")
    assert report.flags[0] == "baseline-unstable"
    tested = [s for s in report.suspects if s.verdict is not None]
    assert {s.id for s in tested} == {"policy", "memo"}
    assert all(s.verdict == "inconclusive" for s in tested)


def test_given_seeds_below_two_when_why_re_runs_then_they_are_clamped_to_two() -> None:
    sink = ListSink()
    make_agent(sink=sink).answer()
    report = why(sink.events, agent=make_agent(), seeds=1, top=1)  # type: ignore[arg-type]
    assert report.seeds == 2 and report.baseline is not None
    assert len(report.baseline.outcomes) == 2


@given(st.sampled_from(["APPROVED", "DECLINED", "issue_refund"]), st.text(max_size=30))
def test_given_a_word_and_any_tail_when_labelled_then_the_label_is_the_word(
    word: str, tail: str,
) -> None:
    assert label_of(f"{word}: {tail}") == word
    assert label_of(f"  {word}({tail}") == word
