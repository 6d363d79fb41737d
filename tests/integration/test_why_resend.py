"""``why --resend``: the re-send tier on the planted examples, through their own models.

The explained call's recorded request is re-sent through a ``FunctionModel``
(the example's model) with pieces removed; the planted piece must be
confirmed and no innocent one. The CLI runs as a real subprocess: the plan
comes before the first call, ``--budget`` caps the calls, and a provider
that fails is one line and exit 2. JSON reports validate against the schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from docs_support import section as docs_section
from planted_support import ROOT, load, record
from resend_providers import planted

from footprint import ConfigError
from lens import why
from lens.explain._report import schema, why_dict

# planted examples whose cause sits in the explained call's own request
RESEND = ("wrong_fact", "wrong_rag_chunk", "steering_over_fact", "seed_wording",
          "wording_innocents", "crash", "conjunction", "redundant_pair")
PROVIDERS = "tests/resend_providers.py"


def _culprits(name: str) -> frozenset[str]:
    culprit = load(name).CULPRIT
    return frozenset((culprit,) if isinstance(culprit, str) else culprit)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name in RESEND:
        out[name] = tmp_path_factory.mktemp(name) / "store"
        record(name, out[name])
    return out


def _ids(s: Any) -> frozenset[str]:
    return frozenset(s.ids) if s.ids else frozenset({s.id})


@pytest.mark.parametrize("name", RESEND)
def test_given_a_planted_run_when_its_request_is_resent_then_the_planted_piece_is_the_root(
        name: str, stores: dict[str, Path]) -> None:
    report = why(str(stores[name]), "last", resend=lambda: planted(name))
    roots = [s for s in report.suspects if s.role == "root"]
    assert report.conclusion == "confirmed", report.conclusion_text
    assert frozenset().union(*(_ids(s) for s in roots)) == _culprits(name)
    confirmed = frozenset().union(*(_ids(s) for s in report.suspects
                                    if s.verdict == "confirmed"))
    assert not confirmed & frozenset(load(name).INNOCENT)
    assert report.resend is not None and report.resend.request == report.step
    assert "later steps of the agent were not re-run" in report.conclusion_text
    jsonschema.validate(why_dict(report), schema())


def test_given_a_planted_run_when_resent_then_each_innocent_piece_was_removed_alone(
        stores: dict[str, Path]) -> None:
    report = why(str(stores["wrong_fact"]), "last", resend=lambda: planted("wrong_fact"))
    by_id = {s.id: s for s in report.suspects}
    for innocent in load("wrong_fact").INNOCENT:
        assert by_id[innocent].verdict == "not-confirmed"
    assert report.baseline is not None and report.baseline.same == report.baseline.runs == 12
    assert report.reruns == report.model_calls.made


def test_given_an_agent_and_a_provider_when_why_is_asked_then_it_refuses_both_tiers(
        stores: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="pick one"):
        why(str(stores["wrong_fact"]), "last", agent=load("wrong_fact").make_agent,
            resend=lambda: planted("wrong_fact"))


def test_given_a_factory_of_no_provider_when_resent_then_the_error_names_the_fix(
        stores: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="not a Provider"):
        why(str(stores["wrong_fact"]), "last", resend=lambda: "gpt")


def _footprint(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run([sys.executable, "-m", "lens.cli", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_given_a_budget_when_resent_by_the_cli_then_the_plan_comes_first_and_the_cap_holds(
        stores: dict[str, Path]) -> None:
    done = _footprint("why", "last", "--store", str(stores["wrong_fact"]), "--resend",
                      "--provider", f"{PROVIDERS}:announcing_wrong_fact", "--budget", "5",
                      "--json")
    assert done.returncode == 0, done.stderr[-400:]
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert lines[0].startswith("footprint why: plan: 12 baseline re-sends")
    assert "--budget 5 caps it at 5" in lines[0]
    assert sum(x == "resend-call" for x in lines) == 5
    report = json.loads(done.stdout)
    jsonschema.validate(report, schema())
    assert report["reruns"] == 5 and report["resend"]["planned_calls"] == 5
    assert report["conclusion"] != "confirmed"


def test_given_the_cli_when_resent_then_the_text_report_names_the_root_and_its_scope(
        stores: dict[str, Path]) -> None:
    done = _footprint("why", "last", "--store", str(stores["wrong_fact"]), "--resend",
                      "--provider", f"{PROVIDERS}:wrong_fact")
    assert done.returncode == 0, done.stderr[-400:]
    first = done.stdout.splitlines()[0]
    assert first.startswith("CONFIRMED: removing system 'supplier-memo' changed the answer "
                            "of request llm#1 (189 EUR → 149 EUR) in 2/2 re-sends")
    assert first.endswith("(request-level; later steps of the agent were not re-run)")


def test_given_a_provider_that_fails_when_resent_then_one_line_and_exit_2(
        stores: dict[str, Path]) -> None:
    done = _footprint("why", "last", "--store", str(stores["wrong_fact"]), "--resend",
                      "--provider", f"{PROVIDERS}:down")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    last = [x for x in done.stderr.splitlines() if x.strip()][-1]
    assert last == ("footprint why: the provider 'down' failed every baseline re-send of "
                    "llm#1 (raised ConnectionError: connection refused by 127.0.0.1:9); "
                    "check --provider or --base-url/--model")


def test_given_provider_without_resend_when_the_cli_runs_then_it_names_the_missing_flag(
        stores: dict[str, Path]) -> None:
    done = _footprint("why", "last", "--store", str(stores["wrong_fact"]), "--provider",
                      f"{PROVIDERS}:wrong_fact")
    assert done.returncode == 2
    assert done.stderr.strip() == ("footprint why: --provider is an option of the re-send "
                                   "tier; add --resend")


def test_given_the_docs_resend_example_when_run_then_its_printed_lines_are_true(
        stores: dict[str, Path]) -> None:
    section = docs_section("## The re-send tier")
    shown = section[section.index("```text\n") + 8:].split("```", 1)[0].splitlines()
    command = shown[0].removeprefix("$ footprint ").split()
    done = _footprint(*command, "--store", str(stores["wrong_fact"]))
    assert done.returncode == 0, done.stderr[-400:]
    assert done.stderr.strip().splitlines()[0] == shown[1]
    assert done.stdout.splitlines()[:2] == shown[2:4]


def test_given_a_follow_up_turn_when_resent_then_the_stale_reply_is_traced_and_went_on_flagged(
        tmp_path: Path) -> None:
    record("stale_history", tmp_path / "store")
    report = why(str(tmp_path / "store"), "last", resend=lambda: planted("stale_history"))
    stale = next(s for s in report.suspects if s.verdict == "confirmed")
    assert stale.kind == "message" and "origin: the agent in an earlier turn" in stale.chain
    assert "answered by a tool call (profile_address) instead" in stale.note
    assert any(f.startswith("went-on: message #3 (assistant)") for f in report.flags)
    exchange = next(s for s in report.suspects if s.kind == "tool_result")
    assert "origin: a call of an earlier turn" in exchange.chain
    jsonschema.validate(why_dict(report), schema())


def test_given_a_tool_result_when_resent_then_its_call_and_result_are_one_piece_by_origin(
        tmp_path: Path) -> None:
    record("tool_result", tmp_path / "store")
    report = why(str(tmp_path / "store"), "last", resend=lambda: planted("tool_result"))
    feed = next(s for s in report.suspects if s.kind == "tool_result")
    assert feed.label == "tool call #call_1 (price_feed) + its result"
    assert "origin: chosen by llm#1" in feed.chain
    assert feed.verdict == "confirmed" and feed.effect == "lost"
    assert report.necessary == (feed.label,)


def test_given_an_openai_compatible_server_when_resent_by_base_url_then_every_call_goes_there(
        tmp_path: Path) -> None:
    from llamacpp_like import llamacpp_like

    from footprint import Agent
    from footprint.agent import tool
    from footprint.providers import OpenAIChat
    from recorder import ParquetSink, Recorder

    def weather(city: str) -> str:
        """Current weather for a city."""
        return f"{city}: sunny, 21C"

    with llamacpp_like() as server:
        recorder = Recorder(sinks=[ParquetSink(tmp_path / "store")])
        try:
            Agent(provider=OpenAIChat("tiny", base_url=server.base_url), model="tiny",
                  tools=[tool(weather)], sink=recorder).run_sync("Weather in Oslo?")
        finally:
            recorder.close()
        recorded = len(server.bodies)
        done = _footprint("why", "last", "--store", str(tmp_path / "store"), "--resend",
                          "--base-url", server.base_url, "--model", "tiny", "--json")
        sent = server.bodies[recorded:]
    assert done.returncode == 0, done.stderr[-400:]
    report = json.loads(done.stdout)
    jsonschema.validate(report, schema())
    assert report["resend"]["provider"] == "openai" and len(sent) == report["reruns"]
    assert report["baseline"]["same"] == report["baseline"]["runs"] == 12
    assert all(b["model"] == "tiny" for b in sent)
    feed = next(s for s in report["suspects"] if s["kind"] == "tool_result")
    assert feed["verdict"] == "confirmed" and "origin: chosen by llm#1" in feed["chain"]


def _memo_model(request: Any) -> str:
    """Quote the newest price: a message saying "now N" beats the system's price list."""
    import re

    for m in reversed(request.messages):
        found = re.search(r"C40 now (\d+)", m.content)
        if found:
            return f"The C40 costs {found.group(1)} EUR."
    listed = re.search(r"C40 grinder (\d+) EUR", request.system)
    return f"The C40 costs {listed.group(1) if listed else 'an unknown amount of'} EUR."


def test_given_a_messages_slot_injection_when_resent_then_its_message_is_named_and_confirmed(
        tmp_path: Path) -> None:
    from footprint import Agent, FunctionModel, define_fact
    from recorder import ParquetSink, Recorder

    recorder = Recorder(sinks=[ParquetSink(tmp_path / "store")])
    try:
        Agent(provider=FunctionModel(_memo_model), model="m",
              system_prompt="Price list: C40 grinder 149 EUR.",
              injections=[define_fact("old-memo", "Memo (2022): C40 now 189.",
                                      slot="messages", role="assistant")],
              sink=recorder).run_sync("What does the C40 cost?")
    finally:
        recorder.close()
    report = why(str(tmp_path / "store"), "last",
                 resend=lambda: FunctionModel(_memo_model, name="memo"))
    root = next(s for s in report.suspects if s.role == "root")
    assert root.kind == "message"
    assert "origin: 'old-memo' (recorded in the messages slot)" in root.chain
    assert root.changes == ("189 EUR → 149 EUR",)
    assert [s.id for s in report.suspects if s.verdict == "confirmed"] == [root.id]


def _wrong_fact_events() -> list[Any]:
    from footprint import ListSink

    sink = ListSink()
    module = load("wrong_fact")
    module.converse(module.make_agent(sink=sink))
    return list(sink.events)


def test_given_events_and_an_expectation_when_resent_then_the_memo_is_what_stands_in_the_way(
        ) -> None:
    report = why(_wrong_fact_events(), "last", resend=lambda: planted("wrong_fact"),
                 expect="149 EUR", step="llm#1")
    assert report.comparator_mode == "expect" and report.conclusion == "confirmed"
    assert [s.id for s in report.suspects if s.verdict == "confirmed"] == ["supplier-memo"]
    jsonschema.validate(why_dict(report), schema())


def test_given_a_request_kept_only_as_a_hash_when_resent_then_the_error_says_why_and_the_fix(
        ) -> None:
    import dataclasses

    from footprint.events import LLMStart

    events = [dataclasses.replace(e, request_ref=None) if isinstance(e, LLMStart) else e
              for e in _wrong_fact_events()]
    with pytest.raises(ConfigError, match=r"llm#1 kept no request text .* drop --resend"):
        why(events, "last", resend=lambda: planted("wrong_fact"))
