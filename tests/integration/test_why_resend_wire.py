"""``why --resend`` against a strict OpenAI-compatible server (tests/llamacpp_like.py with
``strict``): what was recorded is what is re-sent, in the shape every server accepts
(issue 32).

An ingested OpenAI-style trace that recorded two parallel tool calls as one assistant
message each (then both results) is re-sent as one assistant message holding both calls,
followed by their results; a server's refusal is printed whole.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llamacpp_like import LlamaLike, llamacpp_like, ordering_error
from otlp_build import to_json, trace_request
from planted_support import ROOT

from footprint.providers import Message, ToolCall
from footprint.providers._openai import openai_payload
from footprint.providers._order import wire_order
from footprint.providers._types import LLMRequest

SYSTEM = "You are the desk. Refund window: 60 days."
RESULTS = {"call_a": '{"order": "A-1", "days": 40}', "call_b": '{"order": "A-2", "days": 70}'}
RECORDED = f"From the tools: {RESULTS['call_a']}"
"""The recorded answer: the local server's answer cut at the stop sequence ``;`` that the
request was sent with and the trace did not record."""


def _footprint(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _split_parallel_trace() -> list[dict[str, Any]]:
    """One chat span whose input holds two parallel calls as two assistant messages (then
    their two results), as some OpenAI-style instrumentations record them."""
    def call(cid: str, order: str) -> dict[str, Any]:
        return {"role": "assistant", "parts": [{"type": "tool_call", "id": cid,
                                                "name": "lookup", "arguments": {"order": order}}]}

    def result(cid: str) -> dict[str, Any]:
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": cid,
                                           "response": RESULTS[cid]}]}

    inputs = [{"role": "user", "parts": [{"type": "text", "content": "Refund A-1 and A-2?"}]},
              call("call_a", "A-1"), call("call_b", "A-2"), result("call_a"), result("call_b")]
    tid, root, t0 = "ab" * 16, "01" * 8, 1_780_000_000 * 10**9
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.provider.name": "openai",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "finish_reason": "stop",
                                                   "parts": [{"type": "text",
                                                              "content": RECORDED}]}]),
            "gen_ai.tool.definitions": json.dumps([{"type": "function", "name": "lookup",
                                                    "description": "Look an order up."}]),
            "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 5}
    return [{"trace_id": tid, "span_id": "02" * 8, "parent_id": root, "name": "chat m",
             "start": t0, "end": t0 + 10, "attributes": chat},
            {"trace_id": tid, "span_id": root, "name": "invoke_agent desk", "start": t0 - 1,
             "end": t0 + 11, "attributes": {"gen_ai.operation.name": "invoke_agent",
                                            "gen_ai.agent.name": "desk"}}]


@pytest.fixture(scope="module")
def split_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("split")
    lines = root / "trace.jsonl"
    lines.write_bytes(to_json(trace_request(_split_parallel_trace())) + b"\n")
    done = _footprint("ingest", str(lines), "--store", str(root / "store"))
    assert done.returncode == 0, done.stderr
    return root / "store"


@pytest.fixture
def strict() -> Any:
    with llamacpp_like() as server:
        server.strict = True
        yield server


def test_given_parallel_calls_recorded_one_per_message_when_resent_then_a_strict_server_accepts(
        split_store: Path, strict: LlamaLike) -> None:
    done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                      strict.base_url, "--model", "m", "--seeds", "2", "--json")
    assert done.returncode == 0, done.stderr[-600:]
    assert strict.refused == [] and strict.bodies
    first = strict.bodies[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user", "assistant", "tool", "tool"]
    assert [c["id"] for c in first[2]["tool_calls"]] == ["call_a", "call_b"]
    assert all(ordering_error(b["messages"]) is None for b in strict.bodies)


def test_given_a_server_that_refuses_every_resend_when_resent_then_its_message_prints_whole(
        split_store: Path, strict: LlamaLike) -> None:
    strict.expect = {"user": "a-caller-id-this-server-requires-on-every-request-of-this-test"}
    done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                      strict.base_url, "--model", "m", "--seeds", "2")
    assert done.returncode == 2, done.stdout
    assert strict.refused and f"Invalid request: {strict.refused[0]}" in done.stderr


_CALLS = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True)


@given(turns=st.lists(_CALLS, min_size=1, max_size=3), split=st.booleans(),
       results_first=st.booleans(), empty=st.booleans())
def test_given_calls_and_results_in_any_recorded_order_when_sent_then_the_order_is_valid(
        turns: list[list[str]], split: bool, results_first: bool, empty: bool) -> None:
    messages = [Message(role="user", content="q")]
    for t, ids in enumerate(turns):
        calls = [ToolCall(id=f"{i}{t}", name="f") for i in ids]
        said = [Message(role="assistant", content="", tool_calls=(c,)) for c in calls] \
            if split else [Message(role="assistant", content="", tool_calls=tuple(calls))]
        results = [Message(role="tool", content=f"r{c.id}", tool_call_id=c.id) for c in calls]
        messages += (results + said) if results_first else (said + results)
        messages += [Message(role="assistant", content="")] if empty else []
    sent = openai_payload(LLMRequest(model="m", system="s", messages=tuple(messages)), "m")
    assert ordering_error(sent["messages"]) is None
    assert sorted(m["tool_call_id"] for m in sent["messages"] if m["role"] == "tool") == \
        sorted(f"{i}{t}" for t, ids in enumerate(turns) for i in ids)


def test_given_a_request_in_a_valid_shape_when_ordered_then_it_comes_back_unchanged() -> None:
    messages = (Message(role="user", content="q"),
                Message(role="assistant", content="", tool_calls=(ToolCall(id="1", name="f"),
                                                                  ToolCall(id="2", name="f"))),
                Message(role="tool", content="r1", tool_call_id="1"),
                Message(role="tool", content="r2", tool_call_id="2"),
                Message(role="assistant", content="", tool_calls=(ToolCall(id="3", name="f"),)),
                Message(role="tool", content="r3", tool_call_id="3"))
    assert wire_order(messages) == messages


def _weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21C"


def _native(store: Path, server: LlamaLike, **wire: Any) -> None:
    from footprint import Agent
    from footprint.agent import tool
    from footprint.providers import OpenAIChat
    from recorder import ParquetSink, Recorder

    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        Agent(provider=OpenAIChat("tiny", base_url=server.base_url, **wire), model="tiny",
              tools=[tool(_weather)], sink=recorder).run_sync("Weather in Oslo?")
    finally:
        recorder.close()


WIRE = {"max_tokens": 64, "temperature": 0.0, "stop": ["\n\nUser:"],
        "extra_body": {"top_p": 0.5}}


def test_given_a_native_run_with_wire_parameters_when_resent_then_each_resend_carries_them(
        tmp_path: Path, strict: LlamaLike) -> None:
    _native(tmp_path / "store", strict, **WIRE)
    sent = {k: v for k, v in strict.bodies[-1].items() if k not in ("messages", "tools")}
    assert sent == {"model": "tiny", "max_tokens": 64, "temperature": 0.0, "seed": 0,
                    "stop": ["\n\nUser:"], "top_p": 0.5, "tool_choice": "auto"}
    recorded = len(strict.bodies)
    strict.expect = {k: v for k, v in sent.items() if k not in ("model", "seed", "tool_choice")}
    done = _footprint("why", "last", "--store", str(tmp_path / "store"), "--resend",
                      "--base-url", strict.base_url, "--seeds", "2", "--json")
    assert done.returncode == 0, done.stderr[-600:]
    assert strict.refused == [] and len(strict.bodies) > recorded + 2
    assert all(b["tool_choice"] == "auto" for b in strict.bodies if b.get("tools"))
    report = json.loads(done.stdout)
    assert report["resend"]["params"] == {**strict.expect, "tool_choice": "auto"}
    assert report["resend"]["not_in_trace"] == []
    assert not [f for f in report["flags"] if f.startswith(("not-in-trace", "default-max"))]


def test_given_a_trace_without_parameters_when_resent_then_they_are_named_and_max_tokens_bounded(
        split_store: Path, strict: LlamaLike) -> None:
    strict.expect = {"max_tokens": 1024}
    done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                      strict.base_url, "--model", "m", "--seeds", "2", "--json")
    assert done.returncode == 0, done.stderr[-600:]
    report = json.loads(done.stdout)
    assert report["resend"]["not_in_trace"] == ["max_tokens", "temperature", "top_p", "stop"]
    assert any(f.startswith("not-in-trace: max_tokens, temperature, top_p, stop of llm#1 not "
                            "in the trace") for f in report["flags"])
    assert any(f.startswith("default-max-tokens: ") for f in report["flags"])
    assert strict.refused == []


def test_given_parameters_supplied_when_a_trace_lacks_them_then_every_resend_carries_them(
        split_store: Path, strict: LlamaLike) -> None:
    strict.expect = {"max_tokens": 77, "stop": ["END"], "top_p": 0.3, "temperature": 0.2}
    done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                      strict.base_url, "--model", "m", "--seeds", "2", "--max-tokens", "77",
                      "--stop", "END", "--param", "top_p=0.3", "--temperature", "0.2", "--json")
    assert done.returncode == 0, done.stderr[-600:]
    assert strict.refused == [] and strict.bodies
    report = json.loads(done.stdout)
    assert report["resend"]["not_in_trace"] == []
    assert not any(f.startswith("default-max-tokens") for f in report["flags"])


def test_given_a_param_that_is_not_json_when_resent_then_the_error_quotes_it(
        split_store: Path) -> None:
    done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                      "http://127.0.0.1:9/v1", "--param", "top_p=high")
    assert done.returncode == 2 and "--param 'top_p=high': 'high' is not JSON" in done.stderr


def test_given_a_server_that_never_answers_when_resent_then_each_call_is_cut_and_closed(
        split_store: Path) -> None:
    with llamacpp_like() as server:
        server.hang = True
        started = time.monotonic()
        done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                          server.base_url, "--model", "m", "--seeds", "2",
                          "--call-timeout", "0.5", "--timeout", "30")
        took = time.monotonic() - started
        abandoned = _eventually(lambda: server.abandoned, len(server.bodies))
    assert done.returncode == 2, done.stdout
    assert "each call bounded at 0.5 s (--call-timeout), the whole command at 30 s " \
           "(--timeout)" in done.stderr
    assert "no answer within 0.5 s (--call-timeout); the call was cancelled" in done.stderr
    # each call that reached the server was cut and its connection closed (on a loaded
    # machine the first may be cut before it is sent: its 0.5 s include importing httpx)
    assert server.bodies and abandoned == len(server.bodies) <= 2
    assert took < 20, took


def test_given_a_whole_command_timeout_when_it_passes_then_the_call_is_cut_and_the_search_stops(
        split_store: Path) -> None:
    with llamacpp_like() as server:
        server.hang = True
        started = time.monotonic()
        done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                          server.base_url, "--model", "m", "--timeout", "6")
        took = time.monotonic() - started
        abandoned = _eventually(lambda: server.abandoned, len(server.bodies))
    assert done.returncode == 2, done.stdout
    assert "no answer within" in done.stderr and "(--timeout); the call was cancelled" in \
        done.stderr
    assert len(server.bodies) == 1 and abandoned == 1
    assert took < 25, took


def test_given_ctrl_c_during_a_resend_when_interrupted_then_the_call_is_cancelled(
        split_store: Path) -> None:
    with llamacpp_like() as server:
        server.hang = True
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "lens.cli", "why", "last", "--store", str(split_store),
             "--resend", "--base-url", server.base_url, "--model", "m"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert _eventually(lambda: len(server.bodies), 1, within_s=30) == 1
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
        abandoned = _eventually(lambda: server.abandoned, 1)
    assert proc.returncode == 130, err
    assert "interrupted; the re-send under way was cancelled" in err
    assert abandoned == 1


def _eventually(read: Any, want: int, within_s: float = 5.0) -> int:
    ends = time.monotonic() + within_s
    while read() < want and time.monotonic() < ends:
        time.sleep(0.02)
    got: int = read()
    return got


def test_given_a_trace_without_its_stop_when_resends_differ_alike_then_the_report_names_stop(
        split_store: Path) -> None:
    with llamacpp_like() as server:
        done = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                          server.base_url, "--model", "m", "--seeds", "3")
        fixed = _footprint("why", "last", "--store", str(split_store), "--resend", "--base-url",
                           server.base_url, "--model", "m", "--seeds", "3", "--stop", ";",
                           "--json")
    assert done.returncode == 0, done.stderr[-600:]
    first = done.stdout.splitlines()[0]
    answered = f"From the tools: {RESULTS['call_a']}; {RESULTS['call_b']}"
    assert first.startswith("INCONCLUSIVE: the re-sent request does not reproduce the recorded "
                            f"answer: 6/6 unchanged re-sends of llm#1 answered "
                            f"{answered[:59]!r}"[:-1]), first
    assert "not in the trace: max_tokens, temperature, top_p, stop (supply them" in first
    assert "NOT REPRODUCED: every answered re-send gave the same other outcome" in done.stdout
    assert "UNSTABLE" not in done.stdout
    assert fixed.returncode == 0, fixed.stderr[-600:]
    report = json.loads(fixed.stdout)
    assert report["baseline"]["same"] == report["baseline"]["runs"] == 3
    assert report["resend"]["params"]["stop"] == [";"]
    assert not any(f.startswith("not-reproduced") for f in report["flags"])


def test_given_a_provider_that_takes_no_extras_when_resent_then_what_it_cannot_carry_is_flagged(
        tmp_path: Path, strict: LlamaLike) -> None:
    from footprint.providers import FunctionModel
    from lens.explain._resend_why import why

    _native(tmp_path / "store", strict, **WIRE)
    seen: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        seen.append(request)
        return "From the tools: Oslo: sunny, 21C"

    report = why(str(tmp_path / "store"), "last", resend=FunctionModel(model), seeds=2)
    assert report.resend is not None and report.resend.params["top_p"] == 0.5
    assert any(f.startswith("not-carried: tool_choice, top_p of llm#2 cannot reach ")
               for f in report.flags), report.flags
    assert {(r.max_tokens, r.temperature, r.stop) for r in seen} == {(64, 0.0, ("\n\nUser:",))}
