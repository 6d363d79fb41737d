"""Three small offline agents built with other frameworks, each exporting its spans through
the stock OTLP/HTTP exporter, and the truth of what each did.

Every agent answers a refund question with one tool call; its system instruction holds a
planted stale passage (:data:`STALE`). Each records what its model was really sent (the
pydantic-ai ``FunctionModel`` sees the messages, the OpenAI Agents SDK talks to
:class:`fake_openai.FakeOpenAI`, the LangChain fake chat model sees its input), so a
test compares the mapped run with :class:`Truth`, not with the spans.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fake_openai import FakeOpenAI, usage_of
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

__all__ = ["FRAMEWORKS", "INSTRUCTIONS", "MEMO_ID", "QUESTION", "STALE", "SentCall", "Truth",
           "exporting", "run_langchain_rag", "run_openai_agents_handoff"]

STALE = "Refund window: 60 days from delivery (policy memo FIN-2019-07)."
INSTRUCTIONS = f"You are the support desk of Kettle & Co. {STALE}"
QUESTION = "Order A-1047 arrived 40 days ago. Can I get a refund?"
ANSWER = "APPROVED: order A-1047 is inside the 60-day window."
ORDER = {"order_id": "A-1047", "amount": 40, "delivered_days_ago": 40}


@dataclass(frozen=True)
class SentCall:
    """One model call as the model received it."""

    system: tuple[str, ...]
    roles: tuple[str, ...]
    tool_results: tuple[str, ...]
    tools: tuple[str, ...]
    usage: tuple[int, int]


@dataclass
class Truth:
    framework: str
    calls: list[SentCall] = field(default_factory=list)
    tool_runs: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    turns: int = 1


def lookup(truth: Truth, order_id: str) -> str:
    result = json.dumps({**ORDER, "order_id": order_id}, sort_keys=True)
    truth.tool_runs.append(("lookup_order", {"order_id": order_id}, result))
    return result


@contextmanager
def exporting(endpoint: str) -> Iterator[TracerProvider]:
    """A tracer provider exporting to ``endpoint`` with the stock OTLP/HTTP exporter; every
    span is sent when the block ends."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{endpoint}/v1/traces")))
    try:
        yield provider
    finally:
        provider.force_flush()
        provider.shutdown()


def run_pydantic_ai(provider: TracerProvider, *, include_content: bool = True) -> Truth:
    """Two turns of one conversation (the second with the first's history);
    ``include_content=False`` turns pydantic-ai's content capture off."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    truth = Truth("pydantic-ai", turns=2)

    def roles(messages: list[ModelMessage]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found, results = [], []
        for m in messages:
            if isinstance(m, ModelResponse):
                found.append("assistant")
                continue
            for p in m.parts:
                if isinstance(p, UserPromptPart):
                    found.append("user")
                elif isinstance(p, ToolReturnPart):
                    found.append("tool")
                    results.append(p.tool_call_id)
                elif not isinstance(p, SystemPromptPart):
                    found.append(type(p).__name__)
        return tuple(found), tuple(results)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = len(truth.calls) + 1
        seen, results = roles(messages)
        truth.calls.append(SentCall(system=(info.instructions or "",), roles=seen,
                                    tool_results=results,
                                    tools=tuple(t.name for t in info.function_tools),
                                    usage=usage_of(n)))
        usage = RequestUsage(input_tokens=usage_of(n)[0], output_tokens=usage_of(n)[1])
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, UserPromptPart)
                                                  for p in last.parts):
            return ModelResponse(parts=[ToolCallPart(tool_name="lookup_order",
                                                     args={"order_id": "A-1047"},
                                                     tool_call_id=f"call_{n}")], usage=usage)
        return ModelResponse(parts=[TextPart(ANSWER)], usage=usage)

    agent = Agent(FunctionModel(model), instructions=INSTRUCTIONS, name="desk",
                  capabilities=[Instrumentation(settings=InstrumentationSettings(
                      tracer_provider=provider, include_content=include_content))])

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """Look up an order: amount and days since delivery."""
        return lookup(truth, order_id)

    first = agent.run_sync(QUESTION)
    truth.answers.append(first.output)
    second = agent.run_sync("And the second order, A-1048?", message_history=first.all_messages())
    truth.answers.append(second.output)
    return truth


def run_openai_agents(provider: TracerProvider) -> Truth:
    """The OpenAI Agents SDK's own chat-completions model against a fake server, traced by
    OpenInference."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_trace_processors,
    )
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    truth = Truth("openai-agents")
    fake = FakeOpenAI([{"tool_calls": [{"id": "call_1", "name": "lookup_order",
                                        "arguments": {"order_id": "A-1047"}}]},
                       {"content": ANSWER}])
    set_trace_processors([])  # nothing leaves the machine: only OpenInference's processor
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        @function_tool
        def lookup_order(order_id: str) -> str:
            """Look up an order: amount and days since delivery."""
            return lookup(truth, order_id)

        model = OpenAIChatCompletionsModel(
            model="gpt-fake", openai_client=AsyncOpenAI(base_url=fake.base_url, api_key="test"))
        agent = Agent(name="desk", instructions=INSTRUCTIONS, tools=[lookup_order], model=model)
        truth.answers.append(str(Runner.run_sync(agent, QUESTION).final_output))
    finally:
        instrumentor.uninstrument()
        fake.close()
    for n, body in enumerate(fake.requests, 1):
        msgs = body["messages"]
        truth.calls.append(SentCall(
            system=tuple(m["content"] for m in msgs if m["role"] == "system"),
            roles=tuple(m["role"] for m in msgs if m["role"] != "system"),
            tool_results=tuple(m["tool_call_id"] for m in msgs if m["role"] == "tool"),
            tools=tuple(t["function"]["name"] for t in body.get("tools", [])),
            usage=usage_of(n)))
    return truth


def run_langchain(provider: TracerProvider, *, hide_inputs: bool = False) -> Truth:
    """A LangChain tool loop over a fake chat model that can call tools, traced by
    OpenInference (``hide_inputs=True``: OpenInference leaves every input out)."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from openinference.instrumentation import TraceConfig
    from openinference.instrumentation.langchain import LangChainInstrumentor

    truth = Truth("langchain")
    kinds = {"human": "user", "ai": "assistant", "tool": "tool"}

    class ToolFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                      **kw: Any) -> Any:
            n = len(truth.calls) + 1
            truth.calls.append(SentCall(
                system=tuple(str(m.content) for m in messages if m.type == "system"),
                roles=tuple(kinds[m.type] for m in messages if m.type != "system"),
                tool_results=tuple(getattr(m, "tool_call_id", "") for m in messages
                                   if m.type == "tool"),
                tools=tuple(t["function"]["name"] for t in kw.get("tools", [])),
                usage=usage_of(n)))
            return super()._generate(messages, stop, run_manager, **kw)

    def reply(n: int, **fields: Any) -> AIMessage:
        tin, tout = usage_of(n)
        return AIMessage(usage_metadata={"input_tokens": tin, "output_tokens": tout,
                                         "total_tokens": tin + tout}, **fields)

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order: amount and days since delivery."""
        return lookup(truth, order_id)

    model = ToolFake(messages=iter([
        reply(1, content="", tool_calls=[{"id": "call_1", "name": "lookup_order",
                                          "args": {"order_id": "A-1047"}}]),
        reply(2, content=ANSWER)]))

    def loop(question: str) -> str:
        bound = model.bind_tools([lookup_order])
        msgs: list[BaseMessage] = [SystemMessage(INSTRUCTIONS), HumanMessage(question)]
        while True:
            answer = bound.invoke(msgs)
            msgs.append(answer)
            if not answer.tool_calls:
                return str(answer.content)
            msgs += [lookup_order.invoke(call) for call in answer.tool_calls]

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider,
                            config=TraceConfig(hide_inputs=hide_inputs))
    try:
        truth.answers.append(RunnableLambda(loop).with_config(run_name="desk").invoke(QUESTION))
    finally:
        instrumentor.uninstrument()
    return truth


def run_openai_agents_handoff(provider: TracerProvider) -> Truth:
    """A triage agent hands off to the refund desk (the SDK's ``transfer_to_desk`` tool),
    which looks the order up and answers; traced by OpenInference."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_trace_processors,
    )
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    truth = Truth("openai-agents")
    fake = FakeOpenAI([{"tool_calls": [{"id": "call_h", "name": "transfer_to_desk",
                                        "arguments": {}}]},
                       {"tool_calls": [{"id": "call_1", "name": "lookup_order",
                                        "arguments": {"order_id": "A-1047"}}]},
                       {"content": ANSWER}])
    set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        @function_tool
        def lookup_order(order_id: str) -> str:
            """Look up an order: amount and days since delivery."""
            return lookup(truth, order_id)

        model = OpenAIChatCompletionsModel(
            model="gpt-fake", openai_client=AsyncOpenAI(base_url=fake.base_url, api_key="test"))
        desk = Agent(name="desk", instructions=INSTRUCTIONS, tools=[lookup_order], model=model)
        triage = Agent(name="triage", instructions="Route refund questions to the desk.",
                       handoffs=[desk], model=model)
        truth.answers.append(str(Runner.run_sync(triage, QUESTION).final_output))
    finally:
        instrumentor.uninstrument()
        fake.close()
    truth.tool_runs.insert(0, ("transfer_to_desk", {}, '{"assistant": "desk"}'))
    return truth


DESK = "You are the support desk of Kettle & Co. Answer from the documents below."
MEMO_ID = "memo-fin-2019-07"


def run_langchain_rag(provider: TracerProvider) -> Truth:
    """A LangChain tool loop whose system message holds what a retriever found: the stale
    refund memo (:data:`STALE`, document :data:`MEMO_ID`) and an innocent shipping note,
    joined as LangChain's RAG examples join documents; traced by OpenInference."""
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from openinference.instrumentation.langchain import LangChainInstrumentor

    truth = Truth("langchain")
    docs = [Document(page_content=STALE, id=MEMO_ID),
            Document(page_content="Shipping is free on orders over 50 EUR.", id="ship-note")]

    class Policies(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any = None
                                    ) -> list[Document]:
            return docs

    class ToolFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order: amount and days since delivery."""
        return lookup(truth, order_id)

    model = ToolFake(messages=iter([
        AIMessage(content="", tool_calls=[{"id": "call_1", "name": "lookup_order",
                                          "args": {"order_id": "A-1047"}}]),
        AIMessage(content=ANSWER)]))

    def loop(question: str) -> str:
        found = Policies().invoke(question)
        system = "\n\n".join([DESK, *(d.page_content for d in found)])
        msgs: list[BaseMessage] = [SystemMessage(system), HumanMessage(question)]
        bound = model.bind_tools([lookup_order])
        while True:
            answer = bound.invoke(msgs)
            msgs.append(answer)
            if not answer.tool_calls:
                return str(answer.content)
            msgs += [lookup_order.invoke(call) for call in answer.tool_calls]

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        truth.answers.append(RunnableLambda(loop).with_config(run_name="desk").invoke(QUESTION))
    finally:
        instrumentor.uninstrument()
    return truth


FRAMEWORKS: dict[str, Callable[..., Truth]] = {
    "pydantic-ai": run_pydantic_ai,
    "openai-agents": run_openai_agents,
    "langchain": run_langchain,
}
