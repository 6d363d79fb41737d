"""The examples: each runs offline as a script, and the support desk behaves as documented."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint import ConfigError, ListSink, SeededIds
from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    EventBase,
    LLMStart,
    SkillEscalated,
    SkillRejected,
    StepAdvanced,
    StepSkipped,
    to_record,
)
from footprint.providers import LLMRequest, Message, ToolCall, ToolSpec
from lens._examples import support_desk as desk
from lens._examples._desk_brain import desk_brain, refund_windows

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXPECTED_OUTPUT: dict[str, tuple[str, ...]] = {
    "quickstart.py": ("On Saturday Kettle & Co is open 09:00-17:00.", "llm.start",
                      "tool.end", "run.end"),
    "support_desk.py": ("APPROVED: order A-1047 is 47 days old, within the 60-day refund "
                        "window", "[desk-senior]"),
    "feedback_loop.py": ("200 runs recorded in ", "; thumbs-down on release 1.4"),
    "release_regression.py": ("3 regressed, 0 improved, 17 unchanged",
                              "cause: returns (removing 'returns' from B",
                              "0 regressed, 0 improved, 20 unchanged"),
    "custom_host.py": ("MiniHost\n1. one cursor advance per iteration, from the same ctx: "
                       "passed", "2. reachability enforced at pick time: FAILED"),
}


def _offline_env() -> dict[str, str]:
    """The environment with every HTTP proxy pointed at a closed local port."""
    env = dict(os.environ)
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env[key] = "http://127.0.0.1:9"
    return env


def _run_script(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          cwd=cwd, env=_offline_env(), timeout=120, check=False)


def _desk_run(**options: object) -> tuple[str, list[EventBase], desk.SupportDesk]:
    sink = ListSink()
    agent = desk.make_agent(sink=sink, **options)  # type: ignore[arg-type]
    return agent.answer().answer, list(sink.events), agent


@pytest.fixture(scope="module")
def default_run() -> tuple[str, list[EventBase], desk.SupportDesk]:
    return _desk_run()


E = TypeVar("E", bound=EventBase)


def _of(events: Sequence[EventBase], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


# ── every example runs as a script ─────────────────────────────────────────


def test_given_the_examples_folder_when_listed_then_every_script_has_an_expected_output() -> None:
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts == sorted(EXPECTED_OUTPUT)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_given_an_example_when_run_as_a_script_offline_then_it_exits_0_with_its_output(
    name: str,
) -> None:
    done = _run_script(Path("examples") / name, ROOT)
    assert done.returncode == 0, done.stderr
    for expected in EXPECTED_OUTPUT[name]:
        assert expected in done.stdout


def test_given_another_directory_when_the_desk_script_runs_then_it_still_answers(
    tmp_path: Path,
) -> None:
    done = _run_script(EXAMPLES / "support_desk.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("APPROVED: order A-1047")


def test_given_the_desk_script_when_imported_then_it_re_exports_the_packaged_agent() -> None:
    spec = importlib.util.spec_from_file_location("desk_script", EXAMPLES / "support_desk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.make_agent is desk.make_agent
    assert module.main is desk.main
    assert module.DEFAULT_MESSAGE == desk.DEFAULT_MESSAGE
    tree = ast.parse((EXAMPLES / "support_desk.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)]


# ── the support desk's answer and its planted cause ────────────────────────


def test_given_the_default_desk_when_run_then_it_wrongly_approves_the_47_day_old_order(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    answer, _, _ = default_run
    assert answer.startswith("APPROVED: order A-1047 is 47 days old")
    assert "60-day refund window" in answer


def test_given_the_planted_fact_removed_when_run_then_the_desk_declines() -> None:
    answer, events, _ = _desk_run(without=(desk.PLANTED_FACT,))
    assert answer.startswith("DECLINED: order A-1047 is 47 days old, outside the 30-day")
    skipped = _of(events, StepSkipped)
    assert [(s.skill_id, s.step.tool) for s in skipped] == [("refund", "issue_refund")]
    injected = {e.injection_id for e in _of(events, ContextInjected)}
    assert desk.PLANTED_FACT not in injected


@pytest.mark.parametrize("decoy", [i for i in desk.REMOVABLE if i != desk.PLANTED_FACT])
def test_given_a_decoy_removed_when_run_then_the_answer_stays_approved(decoy: str) -> None:
    answer, events, _ = _desk_run(without=(decoy,))
    assert answer.startswith("APPROVED")
    assert decoy not in {e.injection_id for e in _of(events, ContextInjected)}


def test_given_an_unknown_or_bare_string_id_when_removed_then_config_error_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"'legacy-window-fct'.*did you mean"):
        desk.make_agent(without=("legacy-window-fct",))
    with pytest.raises(ConfigError, match=r"pass a tuple of ids"):
        desk.make_agent(without="tone")


# ── the events of the default run ──────────────────────────────────────────


def test_given_the_default_run_when_read_then_billing_is_entered_by_keyword_with_a_witness(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    moves = [e.cursor_move for e in _of(default_run[1], ContextEvaluated)
             if e.cursor_move is not None]
    entry = moves[0]
    assert (entry.by, entry.to, entry.keyword) == ("entry", "billing", "charged")
    assert entry.witness is not None and entry.witness in desk.DEFAULT_MESSAGE


def test_given_the_default_run_when_read_then_billing_routes_to_refund_on_a_passed_guard(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    routes = [e.cursor_move for e in _of(default_run[1], ContextEvaluated)
              if e.cursor_move is not None and e.cursor_move.by == "route"]
    assert len(routes) == 1
    guard = routes[0].guard
    assert guard is not None
    assert (guard.from_skill, guard.to, guard.tool_name, guard.verdict) == (
        "billing", "refund", "lookup_order", True)
    assert [(c.key, c.op, c.value, c.actual_summary, c.passed) for c in guard.conditions] == [
        ("risk", "eq", "low", '"low"', True), ("amount", "lte", 100, "40", True)]


def test_given_the_default_run_when_read_then_two_refusals_escalate_to_the_senior_brain(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    events = default_run[1]
    picks = [e for e in events if isinstance(e, SkillRejected | SkillEscalated)]
    assert [e.type for e in picks] == ["skill.rejected", "skill.rejected", "skill.escalated"]
    first, second, escalated = picks
    assert isinstance(first, SkillRejected) and isinstance(second, SkillRejected)
    assert (first.requested_id, first.reason, first.current_skill_id) == (
        "escalation", "unreachable", "billing")
    assert (second.requested_id, second.reason, second.posture) == (
        "escalation", "posture", "rails")
    assert isinstance(escalated, SkillEscalated)
    assert (escalated.refusals, escalated.to_model) == (2, desk.SENIOR_MODEL)
    after = [e for e in _of(events, LLMStart) if e.seq > escalated.seq]
    assert after and all(e.brain_via == "escalation" for e in after)


def test_given_the_default_run_when_read_then_both_refund_steps_advance_in_order(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    steps = _of(default_run[1], StepAdvanced)
    assert [(s.skill_id, s.step.index, s.step.tool, s.completed) for s in steps] == [
        ("refund", 1, "check_eligibility", False), ("refund", 2, "issue_refund", True)]


def test_given_the_default_run_when_read_then_the_refund_skill_runs_on_its_own_brain(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    starts = _of(default_run[1], LLMStart)
    by_skill = [s for s in starts if s.brain_via == "skill"]
    assert by_skill and {(s.brain_skill_id, s.model) for s in by_skill} == {
        ("refund", desk.REFUND_MODEL)}
    assert starts[0].brain_via is None and starts[0].model == desk.MODEL


def test_given_the_default_run_when_read_then_the_final_call_carries_the_planted_fact(
    default_run: tuple[str, list[EventBase], desk.SupportDesk],
) -> None:
    _, events, agent = default_run
    final = _of(events, LLMStart)[-1]
    since = max(e.seq for e in _of(events, ContextEvaluated) if e.seq < final.seq)
    pieces = [e for e in _of(events, ContextInjected) if since < e.seq < final.seq]
    planted = [p for p in pieces if p.injection_id == desk.PLANTED_FACT]
    assert [(p.slot, p.admitted_via) for p in planted] == [("system-prompt", "always")]
    requests: list[LLMRequest] = agent.setup.provider.requests  # type: ignore[attr-defined]
    assert "Refund window: 60 days" in requests[-1].system


def _without_ids(events: list[EventBase]) -> list[dict[str, object]]:
    return [{k: v for k, v in to_record(e).items() if k not in ("run_id", "conversation_id")}
            for e in events]


def test_given_the_same_seed_when_run_twice_then_the_event_streams_differ_only_in_run_ids(
) -> None:
    _, first, _ = _desk_run(seed=7)
    _, second, _ = _desk_run(seed=7)
    assert first != second
    assert _without_ids(first) == _without_ids(second)
    assert first[0].run_id != second[0].run_id
    _, seeded, _ = _desk_run(seed=7, ids=SeededIds(7))
    assert seeded == _desk_run(seed=7, ids=SeededIds(7))[1]


def test_given_a_calm_customer_when_run_then_nothing_is_refused_and_refunds_answer() -> None:
    answer, events, agent = _desk_run(
        message="I was charged $65 for order B-2210, which arrived broken. Refund please.")
    assert agent.message.startswith("I was charged $65")
    assert answer == ("APPROVED: order B-2210 is 12 days old, within the 60-day refund "
                      "window; a refund of $65 is on its way. [desk-refunds]")
    assert not _of(events, SkillRejected) and not _of(events, SkillEscalated)


# ── the model reads its decision off the prompt ────────────────────────────


def _decision_request(age: int, windows: Sequence[int], filler: str) -> LLMRequest:
    facts = " ".join(f"Refund window: {w} days from delivery." for w in windows)
    done = ToolCall(id="c1", name="check_eligibility", arguments={"order_id": "A-1047"})
    return LLMRequest(
        model="m", system=f"{filler} {facts}",
        messages=(Message(role="user", content="Order A-1047, refund please."),
                  Message(role="assistant", content="", tool_calls=(done,)),
                  Message(role="tool", tool_call_id="c1", tool_name="check_eligibility",
                          content=json.dumps({"days_since_delivery": age}) + " Step 1 done.")),
        tools=(ToolSpec(name="issue_refund", description="d"),
               ToolSpec(name="skip_step", description="d")),
    )


@given(age=st.integers(0, 400), windows=st.lists(st.integers(1, 400), max_size=3),
       filler=st.sampled_from(["", "Shipping takes 5 days.", "Invoices are due in 14 days."]))
def test_given_any_age_and_windows_when_deciding_then_it_refunds_iff_a_window_covers_it(
    age: int, windows: list[int], filler: str,
) -> None:
    reply = desk_brain(_decision_request(age, windows, filler))
    assert isinstance(reply, ToolCall)
    covered = bool(windows) and age <= max(windows)
    assert reply.name == ("issue_refund" if covered else "skip_step")


@given(days=st.integers(1, 10_000), form=st.sampled_from(
    ["a {n}-day refund window", "Refund window: {n} days", "the refund window is {n} days"]))
def test_given_a_stated_window_when_parsed_then_its_days_come_back(days: int, form: str) -> None:
    assert refund_windows("Policy. " + form.format(n=days) + ". Ship in 3 days.") == (days,)


def test_given_no_order_id_when_answering_then_the_model_asks_for_it() -> None:
    request = LLMRequest(model="m", system="", messages=(
        Message(role="user", content="refund please"),))
    assert desk_brain(request) == "Which order is this about? Please send the order id. [m]"
