"""Whole-conversation replay: every turn of a follow-up conversation, re-run from its store.

The conversation has three turns, a turn cascade whose menu a decider model
resolves, and a tool whose results the recorder redacts; it is recorded
into a real Parquet store and replayed offline (no model is called).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_providers_http import FakeServer, _closed_port, openai_text, server  # noqa: F401

from footprint import (
    Agent,
    FunctionModel,
    Intent,
    KeywordScorer,
    OpenAIChat,
    ProviderChoice,
    ScriptedModel,
    StepClock,
    call,
    define_skill,
    skill_graph,
    tool,
)
from footprint._errors import ConfigError, RunError
from footprint.events import EventSink, ToolEnd, TurnRouted
from footprint.providers import LLMRequest, Reply
from lens.cli import _replay as _cmd_replay
from lens.playback._conversation import (
    conversation_of,
    replay_conversation,
    restore_turn,
)
from recorder import ParquetSink, Recorder, Redactor, open_store

MESSAGES = ("zzz qqq order A-1", "zzz qqq and order B-2?", "zzz qqq thanks, order A-1 again")
ORDERS = {"A-1": "kettle, 40 EUR", "B-2": "toaster, 65 EUR"}


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: {ORDERS[order_id]}"


def _brain(request: LLMRequest) -> Reply:
    """Looks the last message's order up, then answers with every tool result it has seen."""
    last_user = [m for m in request.messages if m.role == "user"][-1].content
    after_user = request.messages[[m.content for m in request.messages].index(last_user):]
    if not any(m.role == "tool" for m in after_user):
        return call("lookup", order_id=last_user.rsplit("order ", 1)[1][:3])
    seen = [m.content for m in request.messages if m.role == "tool"]
    return f"{request.system.split('.')[0]}: " + " | ".join(seen)


def make_agent(*, sink: EventSink | None = None, system: str = "Desk v1. Be brief.",
               decider: ScriptedModel | None = None, deterministic: bool = True) -> Agent:
    refund, billing = (define_skill("refund", "refund a payment", "Refund."),
                       define_skill("billing", "invoices", "Bill."))
    graph = (skill_graph(refund, billing)
             .entry(refund, match=Intent("refund money", ("money back",)))
             .entry(billing, match=Intent("invoice billing", ("my invoice",)))
             .classify(KeywordScorer()).build(check="off"))
    picks = decider or ScriptedModel(["billing", "refund", "billing"], name="decider")
    return Agent(provider=FunctionModel(_brain, name="desk"), model="desk-1",
                 system_prompt=system, graph=graph, sink=sink, clock=StepClock(), seed=7,
                 tools=[tool(lookup, deterministic=deterministic)],
                 decider=ProviderChoice(provider=picks, model="small"))


def _record(store: Path) -> list[str]:
    recorder = Recorder(sinks=[ParquetSink(store)],
                        processors=[Redactor(paths=["tool.end:result"])])
    try:
        agent = make_agent(sink=recorder)
        ids = [agent.run_sync(MESSAGES[0]).run_id]
        ids += [agent.follow_up_sync(m).run_id for m in MESSAGES[1:]]
    finally:
        recorder.close()
    return ids


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    store = tmp_path / "store"
    yield store, _record(store)


def test_given_a_recorded_three_turn_conversation_when_the_last_turn_is_replayed_then_all_match(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    decider = ScriptedModel([], name="decider")  # any decider call would raise
    with open_store(store_path) as store:
        events = store.events(ids[2])
        assert any(isinstance(e, TurnRouted) and e.decider and e.decider.picked == "billing"
                   for e in events)
        assert all(e.result.startswith(f"[redacted hmac-sha256:{Redactor().key_id}:")
                   for e in events if isinstance(e, ToolEnd))
        # a prefix past the id's millisecond stamp: runs made in one millisecond share it
        result = replay_conversation(store, ids[2][:24], make_agent(decider=decider))
    assert [r.turn for r in result.turns] == [0, 1, 2]
    assert result.identical, result.last
    assert [r.tools_rerun for r in result.turns] == [1, 1, 1]
    assert result.last.answer_got == ("Desk v1: A-1: kettle, 40 EUR | B-2: toaster, 65 EUR | "
                                      "A-1: kettle, 40 EUR")
    assert decider.requests == []


def test_given_a_changed_prompt_when_a_follow_up_is_replayed_then_turn_0_names_the_divergence(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    with open_store(store_path) as store:
        result = replay_conversation(store, ids[1], make_agent(system="Desk v2. Be brief."))
    assert not result.identical
    assert [r.turn for r in result.turns] == [0]
    assert result.last.request is not None
    step, parts = result.last.request
    assert step == "llm#1" and [p.part for p in parts] == ["system prompt"]


def test_given_a_follow_up_when_restored_then_a_variant_runs_it_with_the_recorded_history(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    with open_store(store_path) as store:
        restored = restore_turn(store, ids[2], make_agent())
    assert [t.turn for t in restored.earlier] == [0, 1]
    assert restored.message == MESSAGES[2]
    answer = restored.run(make_agent(system="Desk v2. Be brief.")).answer
    assert answer == "Desk v2: A-1: kettle, 40 EUR | B-2: toaster, 65 EUR | A-1: kettle, 40 EUR"


def test_given_a_tool_not_declared_deterministic_when_replayed_then_refused_naming_the_tool(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    with open_store(store_path) as store, pytest.raises(ConfigError) as raised:
        replay_conversation(store, ids[0], make_agent(deterministic=False))
    message = str(raised.value)
    assert "tool(s) 'lookup' were redacted" in message
    assert "tool(lookup, deterministic=True)" in message


def test_given_another_redaction_key_when_replayed_then_refused_naming_the_markers_key(
    recorded: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A re-run tool's result is checked against its keyed marker: only with that key."""
    store_path, ids = recorded
    recorded_with = Redactor().key_id
    monkeypatch.setenv("FOOTPRINT_REDACT_KEY", "another-redaction-key-0123456789")
    with open_store(store_path) as store, pytest.raises(ConfigError) as raised:
        replay_conversation(store, ids[0], make_agent())
    assert str(raised.value).startswith(
        f"the recorded result of tool 'lookup' is redacted under key id {recorded_with} and "
        f"the key at hand is {Redactor().key_id}; set $FOOTPRINT_REDACT_KEY")


def test_given_a_tool_whose_result_changed_when_replayed_then_its_hash_differs(
    recorded: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    store_path, ids = recorded
    monkeypatch.setitem(ORDERS, "A-1", "kettle, 45 EUR")
    with open_store(store_path) as store:
        result = replay_conversation(store, ids[2], make_agent())
    report = result.last
    assert report.turn == 0 and report.divergence is not None
    assert report.divergence.expected.startswith("tool.end: lookup")
    assert any(f.startswith("result:") for f in report.divergence.fields)


def test_given_an_earlier_turn_missing_when_a_follow_up_is_replayed_then_the_turn_is_named(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    with open_store(store_path) as store:
        events = [e for rid in ids[1:] for e in store.events(rid)]
    with pytest.raises(ConfigError, match=r"turn\(s\) \[0\] are not in the recording"):
        conversation_of(events, ids[2])


def test_given_a_changed_agent_when_a_turn_is_restored_then_the_earlier_turn_is_named(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    with open_store(store_path) as store, pytest.raises(RunError) as raised:
        restore_turn(store, ids[2], make_agent(system="Desk v2. Be brief."))
    assert "turn 0 of the conversation" in str(raised.value)
    assert "turn 1 cannot be restored" in str(raised.value)


# ── a run recorded with the real OpenAIChat replays with no server ─────────────


def _weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def _openai_agent(base_url: str, sink: EventSink | None = None) -> Agent:
    model = OpenAIChat("m-1", base_url=base_url, api_key="sk-test", trust_env=False,
                       max_retries=0, timeout=2.0)
    return Agent(provider=model, model="m-1", system_prompt="You are terse.",
                 tools=[tool(_weather, name="weather")], sink=sink, clock=StepClock())


def test_given_a_run_recorded_with_openai_chat_when_replayed_without_a_server_then_identical(
    server: FakeServer, tmp_path: Path,  # noqa: F811 (the fixture imported above)
) -> None:
    server.reply(200, {"id": "chatcmpl-1", "model": "m-1", "choices": [{
        "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "call_a", "type": "function", "function": {
            "name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]}}]})
    server.reply(200, openai_text("Sunny in Oslo."))
    server.reply(200, openai_text("Still sunny."))
    recorder = Recorder(sinks=[ParquetSink(tmp_path / "store")])
    try:
        agent = _openai_agent(server.root + "/v1", recorder)
        agent.run_sync("Weather in Oslo?")
        last = agent.follow_up_sync("And now?").run_id
    finally:
        recorder.close()
    assert len(server.received) == 3
    offline = _openai_agent(f"http://127.0.0.1:{_closed_port()}/v1")
    with open_store(tmp_path / "store") as store:
        result = replay_conversation(store, last, offline)
    assert result.identical, result.last
    assert [r.turn for r in result.turns] == [0, 1]
    assert result.last.answer_got == "Still sunny."
    assert len(server.received) == 3


def test_given_a_follow_up_run_when_replayed_at_the_cli_then_every_turn_is_reported(
    recorded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str],
) -> None:
    store_path, ids = recorded
    parser = argparse.ArgumentParser()
    _cmd_replay.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["replay", "last", "--agent", f"{__file__}:make_agent",
                              "--store", str(store_path)])
    assert _cmd_replay.run(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"replay of {ids[2]}: identical — 3 turns, ")
    assert out[1].startswith(f"turn 0 ({ids[0]}): identical — ")
    assert out[2].startswith(f"turn 1 ({ids[1]}): identical — ")


def test_given_labelled_runs_of_a_release_when_a_new_release_replays_them_then_identical(
    tmp_path: Path,
) -> None:
    recorder = Recorder(sinks=[ParquetSink(tmp_path / "store")])
    try:
        agent = make_agent(sink=recorder).variant(release="v1", environment="prod")
        agent.run_sync(MESSAGES[0], user="alice", session="s-1", tags=("vip",),
                       metadata={"plan": "gold"})
        last = agent.follow_up_sync(MESSAGES[1]).run_id
    finally:
        recorder.close()
    with open_store(tmp_path / "store") as store:
        result = replay_conversation(store, last, make_agent().variant(release="v2"))
    assert result.identical, result.last


def test_given_a_restored_turn_when_rerun_cheaply_then_the_recording_serves_until_a_change(
    recorded: tuple[Path, list[str]],
) -> None:
    store_path, ids = recorded
    with open_store(store_path) as store:
        restored = restore_turn(store, ids[2], make_agent())
    same = restored.rerun(make_agent(decider=ScriptedModel([], name="decider")))
    assert same.error is None and same.result is not None
    assert (same.model_calls_served, same.model_calls_made) == (3, 0)  # decider + 2 calls
    changed = restored.rerun(make_agent(system="Desk v2. Be brief."))
    assert changed.result is not None and changed.result.answer.startswith("Desk v2: ")
    assert (changed.model_calls_served, changed.model_calls_made) == (1, 2)
    assert any(isinstance(e, TurnRouted) for e in changed.events)
