"""ScriptedModel and FunctionModel: deterministic in-process models."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint import ConfigError, RunError
from footprint.providers import (
    FunctionModel,
    LLMRequest,
    LLMResponse,
    Message,
    Provider,
    ScriptedModel,
    ToolCall,
    Usage,
    call,
    estimate_tokens,
)


def _request(text: str = "hello", system: str = "sys") -> LLMRequest:
    return LLMRequest(model="m", system=system, messages=(Message(role="user", content=text),))


async def test_given_a_script_when_played_then_replies_come_in_order_with_numbered_calls() -> None:
    model = ScriptedModel([call("search", q="oslo"), [call("a"), call("b")], "done"])
    first = await model.complete(_request())
    second = await model.complete(_request())
    third = await model.complete(_request())
    assert first.tool_calls == (ToolCall(id="call_1", name="search", arguments={"q": "oslo"}),)
    assert [c.id for c in second.tool_calls] == ["call_2", "call_3"]
    assert (first.stop_reason, second.stop_reason, third.stop_reason) == (
        "tool_use", "tool_use", "end_turn")
    assert (third.content, third.tool_calls) == ("done", ())
    assert [r.response_id for r in (first, second, third)] == [
        "scripted-1", "scripted-2", "scripted-3"]


async def test_given_calls_with_ids_when_played_then_the_given_ids_are_kept() -> None:
    model = ScriptedModel([ToolCall(id="mine", name="x"), call("y")])
    assert (await model.complete(_request())).tool_calls[0].id == "mine"
    assert (await model.complete(_request())).tool_calls[0].id == "call_2"


async def test_given_a_full_response_when_played_then_it_is_returned_with_its_usage() -> None:
    scripted = LLMResponse(content="hi", usage=Usage(input_tokens=5, output_tokens=1),
                           stop_reason="max_tokens")
    got = await ScriptedModel([scripted]).complete(_request())
    assert got == scripted


async def test_given_a_script_when_called_then_every_request_is_recorded() -> None:
    model = ScriptedModel(["a", "b"])
    requests = [_request("one"), _request("two")]
    for request in requests:
        await model.complete(request)
    assert model.requests == requests
    assert model.remaining == 0


async def test_given_an_exhausted_script_when_called_then_the_error_says_how_many_were_scripted(
) -> None:
    model = ScriptedModel(["only"], name="planner")
    await model.complete(_request())
    with pytest.raises(RunError, match=r"'planner'.*reply #2 but only 1 were scripted.*add more"):
        await model.complete(_request())


@pytest.mark.parametrize("bad", [42, [], ["text", ToolCall(id="", name="x")], None])
def test_given_a_reply_of_the_wrong_type_when_scripting_then_config_error_quotes_it(
    bad: object,
) -> None:
    with pytest.raises(ConfigError, match=r"reply #1 is .*give a str"):
        ScriptedModel([bad])  # type: ignore[list-item]


@given(system=st.text(max_size=200), text=st.text(max_size=200), reply=st.text(max_size=200))
async def test_given_any_texts_when_usage_is_estimated_then_it_is_chars_over_four_rounded_up(
    system: str, text: str, reply: str
) -> None:
    got = await ScriptedModel([reply]).complete(_request(text, system))
    assert got.usage.input_tokens == -(-len(system + text) // 4)
    assert got.usage.output_tokens == -(-len(reply) // 4) == estimate_tokens(reply)


async def test_given_a_sync_function_when_called_then_it_sees_the_request_and_answers() -> None:
    def echo(request: LLMRequest) -> str:
        return request.messages[-1].content.upper()

    model = FunctionModel(echo, name="echo")
    got = await model.complete(_request("ping"))
    assert (got.content, got.model, model.name) == ("PING", "m", "echo")
    assert model.requests == [_request("ping")]


async def test_given_an_async_function_returning_calls_when_called_then_ids_count_up() -> None:
    async def plan(request: LLMRequest) -> list[ToolCall]:
        return [call("lookup", n=len(request.messages))]

    model = FunctionModel(plan)
    ids = [(await model.complete(_request())).tool_calls[0].id for _ in range(3)]
    assert ids == ["call_1", "call_2", "call_3"]


async def test_given_a_function_returning_junk_when_called_then_run_error_quotes_it() -> None:
    model = FunctionModel(lambda request: 7)  # type: ignore[arg-type, return-value]
    with pytest.raises(RunError, match=r"fn returned 7 of type int for call #1; make fn give"):
        await model.complete(_request())


def test_given_something_not_callable_when_building_then_config_error_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"got 'nope'; pass a function"):
        FunctionModel("nope")  # type: ignore[arg-type]


def test_given_the_in_process_models_when_checked_then_they_satisfy_the_provider_port() -> None:
    assert isinstance(ScriptedModel([]), Provider)
    assert isinstance(FunctionModel(lambda r: ""), Provider)
