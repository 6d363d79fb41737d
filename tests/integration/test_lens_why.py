"""`footprint why`: a search over the whole causal past, and only exact tests convict."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import why_agents as W

from footprint import Agent, FunctionModel, define_instruction, tool
from footprint._errors import ConfigError
from footprint.events import EventSink, ListSink
from footprint.providers import ToolCall
from lens._examples.support_desk import PLANTED_FACT, make_agent
from lens.cli import _why as _cmd_why
from lens.explain._report import WhyReport, render_why, schema, why_dict, why_json
from lens.explain._why import why
from recorder import ParquetSink, Recorder

DESK = "lens._examples.support_desk:make_agent"
CAUSAL_WORDS = re.compile(r"\b(caus\w*|confirm\w*|prov\w*|because)\b", re.IGNORECASE)
ASK = "How much is the grinder?"
Factory = Callable[..., Agent]


def _recorded(factory: Factory, message: str = ASK, **kw: Any) -> list[Any]:
    sink = ListSink()
    with contextlib.suppress(Exception):  # a failed run is still a recording
        factory(sink=sink, **kw).run_sync(message)
    return sink.events


def _explain(factory: Factory, **kw: Any) -> WhyReport:
    return why(_recorded(factory), "last", agent=factory(), **kw)


def _verdicts(r: WhyReport) -> dict[str, str | None]:
    return {s.id or "+".join(s.ids or ()): s.verdict for s in r.suspects}


def _confirmed(r: WhyReport) -> set[str]:
    return {k for k, v in _verdicts(r).items() if v == "confirmed"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("why") / "store"
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        make_agent(sink=recorder).answer()
    finally:
        recorder.close()
    return path


def _cli(store: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser()
    _cmd_why.add_parser(parser.add_subparsers(dest="command"))
    return _cmd_why.run(parser.parse_args(["why", "last", "--store", str(store), *argv]))


def _cli_json(store: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert _cli(store, "--json", *argv) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


# ── the outcome: the whole answer, not its first word ───────────────────────


def test_given_a_price_change_under_one_first_word_when_explained_then_it_is_confirmed() -> None:
    report = _explain(W.price_agent)
    assert report.conclusion == "confirmed" and _confirmed(report) == {"sale-banner"}
    banner = next(s for s in report.suspects if s.id == "sale-banner")
    assert banner.changes == ("149 EUR → 189 EUR",) and banner.score == 0.0
    assert "149 EUR → 189 EUR" in report.conclusion_text


def test_given_label_mode_when_the_price_changes_then_the_report_says_the_comparator_was_blind(
) -> None:
    report = _explain(W.price_agent, label=True)
    assert report.comparator_mode == "label" and not _confirmed(report)
    blind = [f for f in report.flags if f.startswith("comparator-blind")]
    assert blind and "149 EUR → 189 EUR" in blind[0] and "drop --label" in blind[0]


def test_given_expect_when_a_removal_gives_the_wanted_answer_then_it_fixes_the_run() -> None:
    report = _explain(W.price_agent, expect="189 EUR")
    assert report.outcome == "unexpected" and _confirmed(report) == {"sale-banner"}
    regex = _explain(W.price_agent, expect="/costs 1[89]9/")
    assert regex.comparator_mode == "expect" and _confirmed(regex) == {"sale-banner"}


def test_given_a_judge_when_explained_then_its_labels_are_the_outcome() -> None:
    report = _explain(W.price_agent, judge=lambda a: "cheap" if "149" in a else "dear")
    assert report.outcome == "cheap" and _confirmed(report) == {"sale-banner"}


# ── candidates: the whole causal past ─────────────────────────────────────


def test_given_an_instruction_active_only_at_the_first_call_when_explained_then_it_is_found(
) -> None:
    report = _explain(W.early_agent)
    assert "legacy-hint" in _confirmed(report)
    hint = next(s for s in report.suspects if s.id == "legacy-hint")
    assert hint.chain[0] == "LANDED system-prompt of llm#1" and report.step == "llm#2"
    assert not _confirmed(report) & {d.id for d in W.DECOYS}


def test_given_a_tools_only_injection_when_explained_then_it_is_named_with_its_tool() -> None:
    report = _explain(W.twin_agent)
    twin = next(s for s in report.suspects if s.id == "beta-tools")
    assert "+tools lookup_v2" in twin.label and twin.verdict == "confirmed"
    assert _confirmed(report) == {"beta-tools"}


def test_given_a_redundant_pair_when_explained_then_the_pair_is_confirmed_as_a_set() -> None:
    report = _explain(W.pair_agent)
    pair = next(s for s in report.suspects if s.kind == "set")
    assert pair.ids == ("memo-a", "memo-b") and pair.verdict == "confirmed"
    assert "each alone is not enough" in pair.note
    assert _verdicts(report)["memo-a"] == _verdicts(report)["memo-b"] == "not-confirmed"
    assert "each alone is not enough" in report.conclusion_text


# ── statistics: broke is never a flip; noise is never a cause ───────────────


@pytest.mark.parametrize("factory,harmless", [(W.crash_agent, "format-guide"),
                                              (W.loop_agent, "stop-rule")])
def test_given_a_removal_that_crashes_or_loops_when_explained_then_it_is_broke_not_a_cause(
    factory: Factory, harmless: str,
) -> None:
    report = _explain(factory)
    assert _verdicts(report)[harmless] == "broke"
    assert _confirmed(report) == {"sale-banner"}


def test_given_a_sampling_model_when_explained_then_nothing_is_confirmed() -> None:
    report = _explain(W.sampling_agent)
    assert report.conclusion == "inconclusive" and not _confirmed(report)
    assert report.baseline is not None and not report.baseline.stable
    assert any(f.startswith("baseline-unstable") for f in report.flags)


def test_given_a_model_flipping_one_in_ten_when_explained_often_then_no_innocent_is_confirmed(
) -> None:
    confirmed = 0
    for i in range(12):
        events = _recorded(W.sampling_agent, p=0.1, rng_seed=i)
        report = why(events, "last", agent=W.sampling_agent(p=0.1, rng_seed=100 + i))
        confirmed += len(_confirmed(report))
    assert confirmed == 0


def test_given_too_few_seeds_when_a_cause_is_tested_then_it_is_inconclusive() -> None:
    report = _explain(W.price_agent, seeds=2)
    assert _verdicts(report)["sale-banner"] == "inconclusive"
    assert any(f.startswith("too-few-seeds") for f in report.flags)


# ── the search: budget, nothing found ───────────────────────────────────────


def test_given_a_small_budget_when_the_search_stops_then_what_was_not_tested_is_named() -> None:
    report = _explain(W.price_agent, budget=14)
    assert report.reruns == 14 and report.conclusion == "inconclusive"
    assert report.untested and report.conclusion_text.startswith("budget spent: the budget of 14")
    assert "--budget " in report.conclusion_text
    assert "not tested:" in "\n".join(render_why(report))
    early = _explain(W.price_agent, budget=5)
    assert "during the baseline" in early.conclusion_text
    assert len(early.untested) == 7


def test_given_a_budget_spent_before_confirming_when_explained_then_the_isolated_piece_is_kept(
) -> None:
    report = _explain(W.price_agent, budget=20)
    banner = next(s for s in report.suspects if s.id == "sale-banner")
    assert banner.verdict == "untested" and banner.runs == 0 and banner.flips == 0
    assert banner.note.startswith("isolated by the screens in ")
    assert "changed in 0/" not in "\n".join(render_why(report))
    assert report.conclusion == "inconclusive"
    assert report.conclusion_text.startswith(f"budget spent: the screens isolated {banner.label}")
    more = re.search(r"--budget (\d+) would test it", report.conclusion_text)
    assert more is not None
    again = _explain(W.price_agent, budget=int(more.group(1)))
    assert again.conclusion == "confirmed" and _confirmed(again) == {"sale-banner"}


@pytest.mark.parametrize("budget", [3, 8, 14])
def test_given_a_budget_spent_early_when_explained_then_the_budget_it_names_tests_the_rest(
    budget: int,
) -> None:
    report = _explain(W.price_agent, budget=budget)
    more = re.search(r"--budget (\d+) would test the (\d+) untested", report.conclusion_text)
    assert more is not None, report.conclusion_text
    assert int(more.group(2)) == len(report.untested) and int(more.group(1)) > budget
    again = _explain(W.price_agent, budget=int(more.group(1)))
    assert again.untested == (), again.conclusion_text


def test_given_an_expect_no_re_run_meets_when_explained_then_changed_facts_are_not_wording(
) -> None:
    report = _explain(W.price_agent, expect="100 EUR")
    banner = next(s for s in report.suspects if s.id == "sale-banner")
    assert banner.verdict == "not-confirmed" and banner.wording, banner
    text = "\n".join(render_why(report))
    assert "facts held" not in text
    assert "changed, but not as asked (contains '100 EUR'): '149' → '189'" in text, text
    assert report.conclusion_text.startswith("cause not found: removing each of the ")
    assert "never gave the outcome asked for (contains '100 EUR')" in report.conclusion_text


def test_given_no_removable_cause_when_explained_then_the_report_says_cause_not_found() -> None:
    events = _recorded(W.price_agent)
    report = why(events, "last", agent=W.price_agent().without("sale-banner"),
                 allow_mismatch=True)  # the culprit gone: nothing removable is a cause
    assert report.conclusion == "cause-not-found"
    assert report.conclusion_text.startswith("cause not found")


# ── run shape: failed runs, the explained step ─────────────────────────────


def _failing(sink: EventSink | None = None, seed: int = 0) -> Agent:
    calls: list[int] = []

    def fn(request: Any) -> Any:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("provider down")
        return W._first_pick(request)

    return W._agent(fn, sink=sink, seed=seed, tools=[tool(W.archive), tool(W.live)])


def test_given_a_failed_run_when_explained_then_it_is_flagged_and_its_failing_call_explained(
) -> None:
    report = why(_recorded(_failing), "last")
    assert report.run_status == "failed" and report.step == "llm#2"
    assert report.answer == "(the run failed)"
    assert any(f.startswith("run-failed") for f in report.flags)


def _failing_after_pick(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """The early agent whose model raises on its second call: every run fails after llm#1."""
    calls: list[int] = []

    def fn(request: Any) -> Any:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("provider down")
        return W._first_pick(request)

    return W.early_agent(sink=sink, seed=seed).variant(provider=FunctionModel(fn))


def test_given_a_failed_run_when_re_runs_fail_the_same_way_then_its_last_call_is_compared(
) -> None:
    report = why(_recorded(_failing_after_pick), "last", agent=_failing_after_pick,
                 step="llm#1")
    assert report.run_status == "failed" and report.answer.startswith("archive(")
    assert report.baseline is not None and report.baseline.same == report.baseline.runs
    assert report.conclusion == "confirmed"
    assert report.root_causes == ("instructions 'legacy-hint'",)
    assert _confirmed(report) == {"legacy-hint"}


def _raising_on_json(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """A model that raises on its first call while a planted instruction asks for JSON."""

    def fn(request: Any) -> Any:
        if "JSON only" in request.system:
            raise ValueError("cannot produce JSON for this question")
        return "Yes, the pool is open until 20:00."

    return W._agent(fn, sink=sink, seed=seed, injections=[
        *W.DECOYS, define_instruction("json-mode", prompt="Reply in JSON only.")])


def test_given_a_run_whose_first_call_raised_when_explained_then_the_failure_is_searched(
) -> None:
    report = why(_recorded(_raising_on_json), "last", agent=_raising_on_json)
    assert report.run_status == "failed" and report.step == "llm#1"
    assert report.answer == "(the run failed)"
    assert report.baseline is not None and report.baseline.same == report.baseline.runs
    assert report.conclusion == "confirmed" and _confirmed(report) == {"json-mode"}
    assert report.root_causes == ("instructions 'json-mode'",)
    assert "(failed → 'Yes, the pool is open until 20:00.')" in report.conclusion_text


def test_given_a_run_whose_first_call_raised_when_explained_without_agent_then_it_ranks(
) -> None:
    report = why(_recorded(_raising_on_json), "last")
    assert report.mode == "CORRELATIONAL" and report.step == "llm#1"
    assert report.suspects[0].id == "json-mode", [(s.id, s.score) for s in report.suspects]
    assert (report.suspects[0].score or 0) > 0  # ranked by overlap with the error, not "failed"


def _rechecking(sink: EventSink | None = None, seed: int = 0) -> Agent:
    """An instruction makes the model call its tool again and again: max_iterations ends it."""

    def fn(request: Any) -> Any:
        done = [m for m in request.messages if m.role == "tool"]
        if not done or "re-check" in request.system:
            return ToolCall(id="", name="archive", arguments={"order": "G-7"})
        return "The grinder order G-7 is LOST."

    return W._agent(fn, sink=sink, seed=seed, tools=[tool(W.archive)], max_iterations=4,
                    injections=[*W.DECOYS, define_instruction(
                        "paranoid", prompt="Always re-check an order before answering.")])


def test_given_a_run_stopped_at_max_iterations_when_explained_then_the_loop_is_found(
) -> None:
    report = why(_recorded(_rechecking), "last", agent=_rechecking)
    assert report.run_status == "stopped-early"
    assert report.answer == "(the run stopped without an answer)"
    assert report.conclusion == "confirmed" and _confirmed(report) == {"paranoid"}, \
        report.conclusion_text
    assert "(stopped → 'The grinder order G-7 is LOST.')" in report.conclusion_text
    paranoid = next(s for s in report.suspects if s.id == "paranoid")
    assert paranoid.verdict != "broke"


def test_given_an_intermediate_step_when_explained_then_re_runs_compare_at_that_step() -> None:
    report = _explain(W.early_agent, step="llm#1")
    assert report.step == "llm#1" and report.answer.startswith("archive(")
    assert "legacy-hint" in _confirmed(report)
    assert any(f.startswith("intermediate-step") for f in report.flags)


# ── cheap re-runs ──────────────────────────────────────────────────────────


def test_given_a_piece_that_lands_late_when_ablated_then_the_cassette_serves_the_first_call(
) -> None:
    report = _explain(W.late_agent)
    assert _confirmed(report) == {"late-note"}
    assert report.model_calls.saved > 0
    assert report.model_calls.made > 0


# ── the desk, the CLI, the store and the schema ─────────────────────────────


def test_given_the_desk_when_the_cli_explains_with_no_flags_then_the_fact_is_confirmed(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    report = _cli_json(store, capsys, "--agent", DESK)
    jsonschema.validate(report, schema())
    assert report["mode"] == "CAUSAL" and report["conclusion"] == "confirmed"
    fact = next(s for s in report["suspects"] if s["id"] == PLANTED_FACT)
    assert fact["verdict"] == "confirmed" and fact["confidence"] > 0.95
    assert "60 → 30" in " ".join(fact["changes"]) or fact["changes"]
    assert report["events_read"] <= report["events_total"]


def test_given_no_runner_when_explained_then_it_is_correlational_with_no_causal_words(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert _cli(store) == 0
    out = capsys.readouterr().out
    assert "mode: CORRELATIONAL" in out and "⚠ no-runner" in out
    assert CAUSAL_WORDS.search(out) is None, CAUSAL_WORDS.search(out)
    assert f"fact '{PLANTED_FACT}'" in out and "LANDED system-prompt" in out
    report = _cli_json(store, capsys)
    assert report["mode"] == "CORRELATIONAL" and report["baseline"] is None
    assert all(s["verdict"] is None for s in report["suspects"])
    kinds = {s["kind"] for s in report["suspects"]}
    assert {"injection", "tool_result", "cursor_move", "gate"} <= kinds


def test_given_the_desk_store_when_read_then_fewer_events_are_decoded_than_stored(
    store: Path,
) -> None:
    from recorder import open_store

    with open_store(store) as s:
        report = why(s, "last")
    assert 0 < report.events_read < report.events_total


def test_given_a_cursor_stay_when_explained_then_it_is_followed_back_to_the_entering_guard(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    report = _cli_json(store, capsys)
    moves = [s for s in report["suspects"] if s["kind"] == "cursor_move"]
    stay = next(m for m in moves if any(c.startswith("ENTERED by cursor billing→refund by route")
                                        for c in m["chain"]))
    assert any("amount lte 100 (saw 40) ✓" in c for c in stay["chain"])


def test_given_an_unknown_step_when_explained_then_it_exits_2_suggesting_a_call(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert _cli(store, "--step", "llm#44") == 2
    assert "did you mean 'llm#4'" in capsys.readouterr().err


@pytest.mark.parametrize(("attr", "expected"), [
    ("model", "'model' takes an argument 'request'"),
    ("NOTE", "'NOTE' is a str"),
])
def test_given_an_agent_reference_to_no_factory_when_explained_then_it_exits_2_naming_it(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], attr: str, expected: str,
) -> None:
    path = tmp_path / "agent_file.py"
    path.write_text('NOTE = "the model is scripted"\n\n\ndef model(request):\n'
                    '    return "yes"\n', encoding="utf-8")
    assert _cli(store, "--agent", f"{path}:{attr}") == 2
    err = capsys.readouterr().err
    assert expected in err and "name an Agent or a factory" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_given_a_report_when_it_breaks_the_schema_then_validation_refuses_it() -> None:
    report = _explain(W.price_agent)
    data = why_dict(report)
    data["suspects"][0]["verdict"] = "caused"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema())


def test_given_a_searched_report_when_written_as_json_then_it_holds_the_same_data() -> None:
    report = _explain(W.price_agent)
    text = why_json(report)
    assert json.loads(text) == why_dict(report)
    assert text.startswith('{\n  "')  # indented, field order kept


# ── conversations: re-run as that conversation ───────────────────────────


def _conversation() -> list[Any]:
    sink = ListSink()
    agent = W.stale_agent(sink=sink)
    agent.run_sync(W.FIRST)
    agent.follow_up_sync(W.FOLLOW)
    return sink.events


def test_given_a_follow_up_turn_when_explained_then_the_stale_history_message_is_confirmed(
) -> None:
    report = why(_conversation(), "last", agent=W.stale_agent())
    assert report.baseline is not None and report.baseline.same == report.baseline.runs
    culprit = next(s for s in report.suspects if s.verdict == "confirmed")
    assert culprit.kind == "message" and culprit.flavor == "llm#1"
    assert "earlier turn (run " in culprit.chain[1] and "?" not in culprit.chain[1]
    assert culprit.changes == ("149 EUR → 189 EUR",)
    assert _confirmed(report) == {culprit.id}


def test_given_a_follow_up_without_its_earlier_turns_when_explained_then_nothing_is_re_run(
) -> None:
    events = _conversation()
    last = events[-1].run_id
    report = why([e for e in events if e.run_id == last], "last", agent=W.stale_agent())
    assert report.mode == "CORRELATIONAL" and report.reruns == 0
    assert any(f.startswith("conversation-not-restored") for f in report.flags)
    assert any(s.kind == "message" for s in report.suspects)


def test_given_a_run_recorded_as_hashes_when_explained_then_it_is_flagged_and_not_scored(
    tmp_path: Path,
) -> None:
    from recorder import capture, open_store

    recorder = Recorder(sinks=[ParquetSink(tmp_path / "s")], processors=[capture("hashes")])
    try:
        W.price_agent(sink=recorder).run_sync(ASK)
    finally:
        recorder.close()
    with open_store(tmp_path / "s") as s:
        report = why(s, "last", agent=W.price_agent())
    assert any(f.startswith("redacted:") for f in report.flags)
    assert any(f.startswith("redacted-answer") for f in report.flags)
    assert all(x.score is None for x in report.suspects if x.kind == "injection")
    assert _confirmed(report) == {"sale-banner"}


def test_given_a_store_path_and_an_agent_reference_when_explained_then_both_are_opened(
    store: Path,
) -> None:
    report = why(str(store), "last", agent=DESK, expect="DECLINED")
    assert report.conclusion == "confirmed" and report.suspects[0].id == PLANTED_FACT
    innocent = {"refund-policy", "shipping-times", "support-hours", "tone",
                "calm-angry-customer"}
    assert not _confirmed(report) & innocent
    moves = [s for s in report.suspects if s.kind == "cursor_move" and s.verdict == "confirmed"]
    assert {m.removal for m in moves} == {"skill 'billing' hidden", "skill 'refund' hidden"}


def test_given_a_long_loop_in_a_store_when_explained_then_a_small_share_is_decoded(
    tmp_path: Path,
) -> None:
    from recorder import open_store

    recorder = Recorder(sinks=[ParquetSink(tmp_path / "s")])
    try:
        W.long_agent(sink=recorder, pages=60).run_sync(ASK)
    finally:
        recorder.close()
    with open_store(tmp_path / "s") as s:
        report = why(s, "last")
    in_memory = why(_recorded(W.long_agent, pages=60), "last")
    assert report.events_total > 1500 and report.events_read < report.events_total / 5
    assert [x.id for x in report.suspects] == [x.id for x in in_memory.suspects]
    assert [x.chain for x in report.suspects] == [x.chain for x in in_memory.suspects]


# ── the agent to re-run is the recorded one ────────────────────────────────


def test_given_a_factory_of_another_release_when_explained_then_refused_naming_the_difference(
) -> None:
    events = _recorded(W.price_agent)
    changed = W._agent(W._price, sink=None, seed=0, injections=[
        *W.DECOYS, define_instruction("sale-banner", prompt="Summer sale is running.")])
    with pytest.raises(ConfigError) as err:
        why(events, "last", agent=changed)
    text = str(err.value)
    assert "not configured as the recorded run" in text and "'sale-banner'" in text
    assert "--allow-mismatch" in text and "\n" not in text
    other_model = W.price_agent().variant(model="m2")
    with pytest.raises(ConfigError, match=r"model: expected m, got m2"):
        why(events, "last", agent=other_model)
    report = why(events, "last", agent=changed, allow_mismatch=True)
    assert report.mode == "CAUSAL"
    assert why(events, "last", agent=W.price_agent()).mode == "CAUSAL"  # the same: no refusal


def test_given_a_mismatched_agent_file_when_the_cli_explains_then_exit_2_and_allow_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    recorder = Recorder(sinks=[ParquetSink(store)])
    W.price_agent(sink=recorder).run_sync(ASK)
    recorder.close()
    (tmp_path / "helpers_beside.py").write_text(
        "MODEL = 'm2'\n", encoding="utf-8")  # imported by the agent file: its folder is searched
    agent_file = tmp_path / "agent_file.py"
    agent_file.write_text(
        "from helpers_beside import MODEL\n"
        "import why_agents as W\n\n"
        "def make(sink=None, seed=0):\n"
        "    return W.price_agent(sink=sink, seed=seed).variant(model=MODEL)\n",
        encoding="utf-8")
    assert _cli(store, "--agent", f"{agent_file}:make") == 2
    err = capsys.readouterr().err
    assert "model: expected m, got m2" in err and "--allow-mismatch" in err
    assert _cli(store, "--agent", f"{agent_file}:make", "--allow-mismatch", "--json") == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "CAUSAL"
