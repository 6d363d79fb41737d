"""Tools in the reference host: schemas, teaching errors, envelopes, concurrency, order."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from agent_support import make_agent, of, one
from hypothesis import given
from hypothesis import strategies as st

from footprint.agent import ToolReturn, schema_from_signature, tool, validate_args
from footprint.events import ListSink, RunEnd, ToolEnd, ToolStart
from footprint.providers import Reply, ScriptedModel, ToolCall, call
from footprint.providers._arguments import decode_arguments


def forecast(city: str, days: int = 3, units: Literal["c", "f"] = "c",
             tags: list[str] | None = None, detailed: bool = False) -> str:
    """Forecast the weather for a city."""
    return f"{city}: sunny for {days} days in {units}"


CALLS: list[dict[str, Any]] = []


def recorded_forecast(city: str, days: int = 3) -> str:
    """Forecast, remembering each call."""
    CALLS.append({"city": city, "days": days})
    return f"{city}: sunny for {days} days"


def _run(replies: list[Reply], *tools: Any) -> ListSink:
    sink = ListSink()
    make_agent(ScriptedModel(replies), sink, tools=list(tools)).run_sync("weather please")
    return sink


# ── schemas ─────────────────────────────────────────────────────────────────


def test_given_type_hints_when_a_schema_is_derived_then_types_defaults_and_enums_follow() -> None:
    assert schema_from_signature(forecast) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"},
            "units": {"enum": ["c", "f"]}, "tags": {"type": "array", "items": {"type": "string"}},
            "detailed": {"type": "boolean"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    wrapped = tool(forecast)
    assert (wrapped.name, wrapped.schema.description) == ("forecast",
                                                           "Forecast the weather for a city.")


@given(city=st.text(max_size=20), days=st.integers(-1000, 1000))
def test_given_well_typed_arguments_when_validated_then_no_problem(city: str, days: int) -> None:
    assert validate_args(schema_from_signature(forecast), {"city": city, "days": days}) == []


@given(days=st.one_of(st.text(max_size=5), st.floats(allow_nan=False), st.booleans()))
def test_given_a_mistyped_argument_when_validated_then_the_problem_names_it(days: Any) -> None:
    problems = validate_args(schema_from_signature(forecast), {"city": "Oslo", "days": days})
    assert len(problems) == 1 and "args.days" in problems[0] and "integer" in problems[0]


def test_given_missing_and_extra_arguments_when_validated_then_both_are_named() -> None:
    problems = validate_args(schema_from_signature(forecast), {"town": "Oslo"})
    assert problems == ["args.city is required",
                        "args.town is not an argument (allowed: city, days, detailed, tags, "
                        "units)"]


# ── teaching errors: the run continues ──────────────────────────────────────


def test_given_bad_arguments_when_called_then_a_teaching_error_and_the_tool_never_runs() -> None:
    CALLS.clear()
    sink = _run([call("recorded_forecast", city=5), call("recorded_forecast", city="Oslo"),
                 "sunny"], tool(recorded_forecast))
    ends = of(sink.events, ToolEnd)
    assert (ends[0].error, ends[0].status) == (True, "invalid")
    assert "Invalid arguments for recorded_forecast" in ends[0].result
    assert "args.city should be string, got 5" in ends[0].result
    assert CALLS == [{"city": "Oslo", "days": 3}]
    assert one(sink.events, RunEnd).final_content == "sunny"


def test_given_an_unknown_tool_when_called_then_the_model_is_told_the_available_tools() -> None:
    sink = _run([call("teleport", to="mars"), "ok"], tool(forecast))
    end = one(sink.events, ToolEnd)
    assert end.error is True
    assert end.result == "There is no tool named 'teleport'. Available tools: forecast."
    assert one(sink.events, RunEnd).final_content == "ok"


def test_given_malformed_json_arguments_when_called_then_the_raw_text_is_quoted_back() -> None:
    broken = ToolCall(id="c1", name="forecast", arguments=decode_arguments('{"city": "Os'))
    sink = _run([broken, "ok"], tool(forecast))
    end = one(sink.events, ToolEnd)
    assert end.error is True and end.status == "invalid"
    assert "could not be read (not valid JSON" in end.result and '{"city": "Os' in end.result
    assert one(sink.events, RunEnd).final_content == "ok"


def exploding(city: str) -> str:
    """Always fails."""
    raise ValueError(f"no station in {city}")


def test_given_a_raising_tool_when_called_then_an_error_result_and_the_run_continues() -> None:
    sink = _run([call("exploding", city="Oslo"), "sorry"], tool(exploding))
    end = one(sink.events, ToolEnd)
    assert (end.error, end.status) == (True, "failure")
    assert end.result == "exploding failed: ValueError: no station in Oslo"
    assert one(sink.events, RunEnd).final_content == "sorry"


def partial_lookup(order_id: str) -> ToolReturn:
    """Look an order up; some fields may be missing."""
    return ToolReturn(content={"order_id": order_id, "amount": None}, status="partial")


def plain_dict(order_id: str) -> dict[str, Any]:
    """A plain dict result (not an envelope)."""
    return {"content": "not an envelope on its own", "order_id": order_id}


def test_given_a_tool_return_when_returned_then_content_and_status_are_honoured() -> None:
    sink = ListSink()
    agent = make_agent(ScriptedModel([[call("partial_lookup", order_id="A1"),
                                       call("plain_dict", order_id="B2")], "done"]), sink,
                       tools=[tool(partial_lookup), tool(plain_dict)])
    agent.run_sync("look up")
    ends = of(sink.events, ToolEnd)
    assert (ends[0].status, ends[0].result) == ("partial",
                                                '{"amount": null, "order_id": "A1"}')
    assert ends[1].status is None and '"order_id": "B2"' in ends[1].result
    tool_messages = [m for m in agent.checkpoint()["history"] if m["role"] == "tool"]
    assert tool_messages[0]["content"] == '{"amount": null, "order_id": "A1"}'


# ── concurrency and order ───────────────────────────────────────────────────


def test_given_two_coroutine_tools_in_one_batch_when_run_then_they_overlap_and_record_in_order(
) -> None:
    log: list[str] = []
    started = {"slow": asyncio.Event(), "fast": asyncio.Event()}

    async def _work(me: str, other: str, linger: float) -> str:
        log.append(f"{me} start")
        started[me].set()
        await asyncio.wait_for(started[other].wait(), timeout=2)
        await asyncio.sleep(linger)
        log.append(f"{me} end")
        return f"{me} done"

    async def slow(x: int) -> str:
        """Slow tool."""
        return await _work("slow", "fast", 0.2)

    async def fast(x: int) -> str:
        """Fast tool."""
        return await _work("fast", "slow", 0.0)

    sink = _run([[call("slow", x=1), call("fast", x=2)], "both done"], tool(slow), tool(fast))
    assert log == ["slow start", "fast start", "fast end", "slow end"]
    starts, ends = of(sink.events, ToolStart), of(sink.events, ToolEnd)
    assert [s.tool_name for s in starts] == ["slow", "fast"]
    assert [s.parallel_count for s in starts] == [2, 2]
    assert [(e.tool_name, e.result, e.error) for e in ends] == [
        ("slow", "slow done", False), ("fast", "fast done", False)]
    assert max(s.seq for s in starts) < min(e.seq for e in ends)
