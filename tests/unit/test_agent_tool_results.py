"""Tool results in the host: data stays whole, only the exact effects envelope is read,
host-assigned statuses never route, timeouts and unreadable results end as ``tool.end``."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from agent_support import make_agent, of, one, skill

from footprint import ConfigError
from footprint.agent import ToolReturn, is_envelope, tool
from footprint.agent._results import read_result
from footprint.events import ListSink, RunEnd, ToolEffect, ToolEnd
from footprint.events._codec import from_record, to_record
from footprint.graph import SkillGraph, skill_graph
from footprint.injection import define_instruction
from footprint.providers import ScriptedModel, ToolCall, call

_PT = {"kind": "propose-transition", "target_skill_id": "b", "reason": "go"}
_RI = {"kind": "require-instruction", "instruction_id": "i1", "delivery_lease": "next-call"}
_CALL = ToolCall(id="c1", name="t", arguments={})

# (value, is it the exact effects envelope?)
SHAPES: list[tuple[str, Any, bool]] = [
    ("data with a foreign status", {"content": "Printer on fire", "status": "open",
                                    "priority": "P1"}, False),
    ("content and an allowed status only", {"content": "x", "status": "denied"}, False),
    ("an empty effects list", {"content": "x", "effects": []}, False),
    ("an unknown effect kind", {"content": "x", "effects": [{"kind": "explode"}]}, False),
    ("an extra key", {"content": "x", "effects": [_PT], "priority": "P1"}, False),
    ("effects not a list", {"content": "x", "effects": "propose-transition"}, False),
    ("an effect with a foreign key", {"content": "x", "effects": [{**_PT, "x": 1}]}, False),
    ("an effect without its target", {"content": "x",
                                      "effects": [{"kind": "propose-transition"}]}, False),
    ("a status outside the closed set", {"content": "x", "effects": [_PT],
                                         "status": "ok"}, False),
    ("no content", {"effects": [_PT]}, False),
    ("an unknown lease", {"content": "x", "effects": [{**_RI,
                                                       "delivery_lease": "forever"}]}, False),
    ("a list", ["content", "effects"], False),
    ("an unhashable status", {"content": "x", "effects": [_PT], "status": ["success"]},
     False),
    ("content and a proposal", {"content": "x", "effects": [_PT]}, True),
    ("content, a proposal and a status", {"content": "x", "effects": [_PT],
                                          "status": "success"}, True),
    ("a camelCase lease", {"content": "x", "effects": [
        {"kind": "require-instruction", "instructionId": "i1",
         "deliveryLease": "until-skill-exit"}]}, True),
    ("two effects as a tuple", {"content": {"a": 1}, "effects": (_PT, _RI)}, True),
]


@pytest.mark.parametrize(("label", "value", "envelope"), SHAPES, ids=[s[0] for s in SHAPES])
def test_given_a_tool_value_when_read_then_only_the_exact_envelope_is_unwrapped(
    label: str, value: Any, envelope: bool
) -> None:
    assert is_envelope(value) is envelope, label
    read = read_result(value, _CALL)
    if envelope:
        assert read.effects and read.text != ""
    else:
        assert (read.effects, read.status) == ([], None)
        assert read.text == (value if isinstance(value, str) else read_result(
            ToolReturn(content=value), _CALL).text)


def printer() -> dict[str, str]:
    """Report the printer."""
    return {"content": "Printer on fire", "status": "open", "priority": "P1"}


def test_given_a_dict_with_content_and_status_when_returned_then_the_model_reads_it_whole(
) -> None:
    sink = ListSink()
    make_agent(ScriptedModel([call("printer"), "ok"]), sink, tools=[tool(printer)]).run_sync(
        "printer?")
    end = one(sink.events, ToolEnd)
    assert end.result == '{"content": "Printer on fire", "priority": "P1", "status": "open"}'
    assert (end.status, end.status_by) == (None, None)


# ── host-assigned statuses never route ──────────────────────────────────────


def boom() -> str:
    """Always crash."""
    raise RuntimeError("down")


def refuse(who: str) -> ToolReturn:
    """Refuse someone."""
    return ToolReturn(content=f"{who} may not", status="denied")


def _status_graph() -> SkillGraph:
    a, failed, bad, denied = skill("a"), skill("failed"), skill("bad"), skill("denied")
    return (skill_graph(a, failed, bad, denied).entry(a)
            .route(a, failed, on_tool_status=["failure"])
            .route(a, bad, on_tool_status=["invalid"])
            .route(a, denied, on_tool_status=["denied"]).build(check="off"))


@pytest.mark.parametrize(("calls", "status"), [
    ([call("no_such_tool")], "invalid"),
    ([call("refuse")], "invalid"),  # a required argument is missing
    ([call("refuse", who=3)], "invalid"),
    ([call("boom")], "failure"),
], ids=["unknown tool", "missing argument", "wrong type", "crash"])
def test_given_a_host_assigned_status_when_a_route_waits_for_it_then_the_cursor_stays(
    calls: list[ToolCall], status: str
) -> None:
    sink = ListSink()
    agent = make_agent(ScriptedModel([calls, "done"]), sink, graph=_status_graph(),
                       tools=[tool(boom), tool(refuse)])
    result = agent.run_sync("go")
    end = one(sink.events, ToolEnd)
    assert (end.status, end.status_by, end.error) == (status, "host", True)
    assert result.cursor == "a"


def test_given_a_tool_declared_status_when_a_route_waits_for_it_then_the_cursor_moves() -> None:
    sink = ListSink()
    agent = make_agent(ScriptedModel([call("refuse", who="bob"), "done"]), sink,
                       graph=_status_graph(), tools=[tool(boom), tool(refuse)])
    assert agent.run_sync("go").cursor == "denied"
    end = one(sink.events, ToolEnd)
    assert (end.status, end.status_by, end.error) == ("denied", "tool", False)
    assert from_record(to_record(end)) == end


def test_given_an_invented_tool_name_when_a_route_waits_for_that_name_then_it_does_not_fire(
) -> None:
    a, b = skill("a"), skill("b")
    graph = skill_graph(a, b).entry(a).route(a, b, on_tool_return="ghost").build(check="off")
    agent = make_agent(ScriptedModel([call("ghost"), "done"]), ListSink(), graph=graph)
    assert agent.run_sync("go").cursor == "a"


# ── timeouts and unreadable results ─────────────────────────────────────────

RELEASE = threading.Event()


def hang() -> str:
    """Hang until released (bounded)."""
    RELEASE.wait(5)
    return "late"


async def hang_async() -> str:
    """Hang asynchronously."""
    import asyncio
    await asyncio.sleep(5)
    return "late"


@pytest.mark.parametrize("fn", [hang, hang_async], ids=["function", "coroutine"])
def test_given_a_hanging_tool_with_a_timeout_when_called_then_tool_end_records_the_timeout(
    fn: Any,
) -> None:
    sink = ListSink()
    t0 = time.monotonic()
    result = make_agent(ScriptedModel([call(fn.__name__), "gave up"]), sink,
                        tools=[tool(fn, timeout_s=0.2)]).run_sync("go")
    try:
        assert time.monotonic() - t0 < 3
        end = one(sink.events, ToolEnd)
        assert (end.status, end.status_by, end.error, end.timeout_s) == (
            "failure", "host", True, 0.2)
        assert "did not finish within 0.2 s" in end.result
        assert result.answer == "gave up"
        assert from_record(to_record(end)) == end
    finally:
        RELEASE.set()
        RELEASE.clear()


def test_given_an_agent_tool_timeout_when_a_tool_hangs_then_the_agent_default_applies() -> None:
    sink = ListSink()
    try:
        make_agent(ScriptedModel([[call("hang"), call("refuse", who="x")], "ok"]), sink,
                   tools=[tool(hang), tool(refuse)], tool_timeout_s=0.2).run_sync("go")
    finally:
        RELEASE.set()
        RELEASE.clear()
    ends = of(sink.events, ToolEnd)
    assert [(e.tool_name, e.timeout_s, e.status_by) for e in ends] == [
        ("hang", 0.2, "host"), ("refuse", None, "tool")]


def own_timeout() -> str:
    """Raise the tool's own TimeoutError."""
    raise TimeoutError("upstream slow")


def test_given_a_tool_raising_its_own_timeout_error_when_called_then_it_is_a_crash() -> None:
    sink = ListSink()
    make_agent(ScriptedModel([call("own_timeout"), "ok"]), sink,
               tools=[tool(own_timeout, timeout_s=5)]).run_sync("go")
    end = one(sink.events, ToolEnd)
    assert (end.status, end.timeout_s) == ("failure", None)
    assert "TimeoutError: upstream slow" in end.result


def surrogate() -> str:
    """Return text with a lone surrogate."""
    return "bad \ud800 text"


def deep() -> Any:
    """Return a structure nested past the recursion limit."""
    value: Any = []
    for _ in range(5000):
        value = [value]
    return value


def test_given_a_lone_surrogate_in_a_result_when_run_then_the_run_ends_with_it_escaped(
) -> None:
    sink = ListSink()
    make_agent(ScriptedModel([call("surrogate"), "ok"]), sink,
               tools=[tool(surrogate)]).run_sync("go")
    assert one(sink.events, ToolEnd).result == "bad \\ud800 text"
    assert one(sink.events, RunEnd).final_content == "ok"


def test_given_a_result_nested_past_the_recursion_limit_when_run_then_a_host_failure(
) -> None:
    sink = ListSink()
    make_agent(ScriptedModel([call("deep"), "ok"]), sink, tools=[tool(deep)]).run_sync("go")
    end = one(sink.events, ToolEnd)
    assert (end.status, end.status_by) == ("failure", "host")
    assert "RecursionError" in end.result
    assert one(sink.events, RunEnd).final_content == "ok"


def propose() -> dict[str, Any]:
    """Propose moving on."""
    return {"content": "moving", "effects": [_PT]}


def test_given_the_exact_envelope_when_returned_then_its_effect_is_judged() -> None:
    a, b = skill("a"), skill("b")
    graph = skill_graph(a, b).entry(a).route(a, b, on_tool_return="other").build(check="off")
    sink = ListSink()
    make_agent(ScriptedModel([call("propose"), "ok"]), sink, graph=graph,
               tools=[tool(propose)]).run_sync("go")
    assert one(sink.events, ToolEnd).result == "moving"
    assert one(sink.events, ToolEffect).outcome == "accepted"


# ── tool-name collisions ────────────────────────────────────────────────────


def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def other_lookup(q: str) -> str:
    """Look something else up."""
    return f"other {q}"


def test_given_two_skills_with_different_tools_of_one_name_when_built_then_both_are_named(
) -> None:
    a = skill("a", tools=[tool(lookup)])
    b = skill("b", tools=[tool(other_lookup, name="lookup")])
    with pytest.raises(ConfigError) as err:
        make_agent(ScriptedModel(["x"]), ListSink(), injections=[a, b])
    text = str(err.value)
    assert "'lookup'" in text and "skill 'a'" in text and "skill 'b'" in text
    assert "\n" not in text and "rename" in text


def test_given_a_baseline_tool_hiding_a_skill_tool_when_built_then_it_is_refused() -> None:
    a = skill("a", tools=[tool(other_lookup, name="lookup")])
    with pytest.raises(ConfigError,
                       match=r"\(registry vs skill\): Agent\(tools=\.\.\.\) and skill 'a'"):
        make_agent(ScriptedModel(["x"]), ListSink(), injections=[a], tools=[tool(lookup)])


def test_given_one_function_as_a_baseline_tool_and_a_skill_tool_when_built_then_refused() -> None:
    a = skill("a", tools=[tool(lookup)])
    with pytest.raises(ConfigError) as err:
        make_agent(ScriptedModel(["x"]), ListSink(), injections=[a], tools=[lookup])
    text = str(err.value)
    assert "duplicate tool name 'lookup' (registry vs skill)" in text and "skill 'a'" in text
    assert "\n" not in text


def test_given_one_function_shared_by_two_skills_when_built_then_it_runs() -> None:
    a = skill("a", tools=[tool(lookup)])
    b = skill("b", tools=[tool(lookup)])
    sink = ListSink()
    make_agent(ScriptedModel([call("lookup", q="x"), "ok"]), sink, injections=[a, b]
               ).run_sync("go")
    assert [e.result for e in sink.events if isinstance(e, ToolEnd)] == ["found x"]


def test_given_a_skill_tool_named_read_skill_when_built_then_it_is_refused() -> None:
    a = skill("a", tools=[tool(lookup, name="read_skill")])
    with pytest.raises(ConfigError, match="registers itself"):
        make_agent(ScriptedModel(["x"]), ListSink(), injections=[a])


# ── smaller: carried roles, the batch's event order ────────────────────────


def test_given_a_provider_without_carried_roles_when_a_system_message_is_delivered_then_refused(
) -> None:
    note = define_instruction("note", prompt="Mind the policy.", slot="messages", role="system")
    with pytest.raises(ConfigError, match=r"carries user, assistant\)"):
        make_agent(ScriptedModel(["x"]), ListSink(), injections=[note])
    user_note = define_instruction("note", prompt="Mind it.", slot="messages", role="user")
    make_agent(ScriptedModel(["x"]), ListSink(), injections=[user_note]).run_sync("go")


def test_given_a_concurrent_batch_when_recorded_then_all_starts_come_first_and_ends_in_call_order(
) -> None:
    sink = ListSink()
    make_agent(ScriptedModel([[call("hang"), call("lookup", q="a")], "ok"]), sink,
               tools=[tool(hang, timeout_s=0.2), lookup]).run_sync("go")
    RELEASE.set()
    RELEASE.clear()
    tools = [(e.type, getattr(e, "tool_name", "")) for e in sink.events
             if e.type in ("tool.start", "tool.end")]
    assert tools == [("tool.start", "hang"), ("tool.start", "lookup"),
                     ("tool.end", "hang"), ("tool.end", "lookup")]
