"""The refund desk of :mod:`foreign_agents` in the layouts real agents use to hand a model its
instructions and documents, each with the stale passage (:data:`foreign_agents.STALE`) as one
part among innocent ones: pydantic-ai ``system_prompt`` parts with a dynamic
``@agent.system_prompt`` and an ``instructions`` list; an OpenAI Agents SDK handoff whose
target's instructions hold it as one paragraph; LangChain with what a retriever found in the
user message (``Context: … Question: …``), cited (``[1]``) or wrapped (``<doc id=…>``) in the
system message; an OpenAI Agents SDK desk whose policy tool returns the stale passage (a stale
tool result beside the fresh order lookup). Each returns the :class:`foreign_agents.Truth` of
what its model was sent."""

from __future__ import annotations

from typing import Any

from fake_openai import FakeOpenAI, usage_of
from foreign_agents import ANSWER, MEMO_ID, QUESTION, STALE, SentCall, Truth, lookup
from opentelemetry.sdk.trace import TracerProvider

__all__ = ["INNOCENT", "LAYOUTS", "run_langchain_layout", "run_openai_agents_stale_handoff",
           "run_openai_agents_stale_tool_result", "run_pydantic_ai_parts"]

INTRO = "You are the support desk of Kettle & Co."
SHIPPING = "Shipping is free on orders over 50 EUR."
INNOCENT = (INTRO, SHIPPING, "Answer in one line.", "Name the order you looked up.")
"""The parts beside the stale one: removing any of them must change nothing."""


def run_pydantic_ai_parts(provider: TracerProvider) -> Truth:
    """``system_prompt=(intro, stale)``, a dynamic ``@agent.system_prompt`` and an
    ``instructions`` list of two."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    truth = Truth("pydantic-ai")

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = len(truth.calls) + 1
        parts = tuple(p.content for m in messages if isinstance(m, ModelRequest)
                      for p in m.parts if isinstance(p, SystemPromptPart))
        truth.calls.append(SentCall(system=(info.instructions or "", *parts), roles=(),
                                    tool_results=(), tools=(), usage=usage_of(n)))
        usage = RequestUsage(input_tokens=usage_of(n)[0], output_tokens=usage_of(n)[1])
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, UserPromptPart)
                                                  for p in last.parts):
            return ModelResponse(parts=[ToolCallPart(tool_name="lookup_order",
                                                     args={"order_id": "A-1047"},
                                                     tool_call_id=f"call_{n}")], usage=usage)
        return ModelResponse(parts=[TextPart(ANSWER)], usage=usage)

    agent = Agent(FunctionModel(model), system_prompt=(INTRO, STALE), name="desk",
                  instructions=[INNOCENT[2], INNOCENT[3]],
                  capabilities=[Instrumentation(settings=InstrumentationSettings(
                      tracer_provider=provider))])

    @agent.system_prompt
    def shipping() -> str:
        return SHIPPING

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """Look up an order: amount and days since delivery."""
        return lookup(truth, order_id)

    truth.answers.append(agent.run_sync(QUESTION).output)
    return truth


def run_openai_agents_stale_handoff(provider: TracerProvider) -> Truth:
    """A triage agent hands off to the refund desk, whose instructions are four paragraphs,
    one of them the stale passage; traced by OpenInference."""
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
        desk = Agent(name="desk", instructions="\n\n".join([INTRO, STALE, *INNOCENT[1:]]),
                     tools=[lookup_order], model=model)
        triage = Agent(name="triage", instructions="Route refund questions to the desk.",
                       handoffs=[desk], model=model)
        truth.answers.append(str(Runner.run_sync(triage, QUESTION).final_output))
    finally:
        instrumentor.uninstrument()
        fake.close()
    for n, body in enumerate(fake.requests, 1):
        truth.calls.append(SentCall(
            system=tuple(m["content"] for m in body["messages"] if m["role"] == "system"),
            roles=(), tool_results=(), tools=(), usage=usage_of(n)))
    return truth



def run_openai_agents_stale_tool_result(provider: TracerProvider) -> Truth:
    """The refund desk calls two tools at once: ``lookup_order`` (fresh) and
    ``refund_policy``, whose result is the stale passage; traced by OpenInference."""
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
    fake = FakeOpenAI([{"tool_calls": [
                          {"id": "call_1", "name": "lookup_order",
                           "arguments": {"order_id": "A-1047"}},
                          {"id": "call_2", "name": "refund_policy", "arguments": {}}]},
                       {"content": ANSWER}])
    set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        @function_tool
        def lookup_order(order_id: str) -> str:
            """Look up an order: amount and days since delivery."""
            return lookup(truth, order_id)

        @function_tool
        def refund_policy() -> str:
            """The refund policy in force."""
            truth.tool_runs.append(("refund_policy", {}, STALE))
            return STALE

        model = OpenAIChatCompletionsModel(
            model="gpt-fake", openai_client=AsyncOpenAI(base_url=fake.base_url, api_key="test"))
        desk = Agent(name="desk", instructions="\n\n".join(INNOCENT),
                     tools=[lookup_order, refund_policy], model=model)
        truth.answers.append(str(Runner.run_sync(desk, QUESTION).final_output))
    finally:
        instrumentor.uninstrument()
        fake.close()
    for n, body in enumerate(fake.requests, 1):
        truth.calls.append(SentCall(
            system=tuple(m["content"] for m in body["messages"] if m["role"] == "system"),
            roles=(), tool_results=tuple(m["tool_call_id"] for m in body["messages"]
                                         if m["role"] == "tool"),
            tools=(), usage=usage_of(n)))
    return truth

SHIP_ID = "ship-note"


def _documents(layout: str, texts: list[tuple[str, str]]) -> str:
    if layout in ("cited", "late"):
        return "\n".join(f"[{i}] {text}" for i, (_, text) in enumerate(texts, 1))
    if layout == "tagged":
        return "<documents>\n" + "\n".join(f'<doc id="{i}">{text}</doc>'
                                           for i, text in texts) + "\n</documents>"
    return "\n\n".join(text for _, text in texts)


def run_langchain_layout(provider: TracerProvider, layout: str) -> Truth:
    """A LangChain tool loop given the stale memo (:data:`MEMO_ID`) and an innocent shipping
    note by a retriever, laid out as ``layout``: ``user-context`` (``Context: … Question:``
    in the user message), ``cited`` (``[1] …`` lines in the system message) or ``tagged``
    (``<doc id=…>`` in the system message), or ``late`` (cited, in the system message of
    the second call only: the retriever ran before the first); traced by OpenInference."""
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
            Document(page_content=SHIPPING, id=SHIP_ID)]

    class Policies(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any = None
                                    ) -> list[Document]:
            return docs

    class ToolFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                      **kw: Any) -> Any:
            truth.calls.append(SentCall(
                system=tuple(str(m.content) for m in messages if m.type == "system"),
                roles=tuple(str(m.content) for m in messages if m.type == "human"),
                tool_results=(), tools=(), usage=(0, 0)))
            return super()._generate(messages, stop, run_manager, **kw)

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order: amount and days since delivery."""
        return lookup(truth, order_id)

    model = ToolFake(messages=iter([
        AIMessage(content="", tool_calls=[{"id": "call_1", "name": "lookup_order",
                                          "args": {"order_id": "A-1047"}}]),
        AIMessage(content=ANSWER)]))

    def loop(question: str) -> str:
        found = [(str(d.id), d.page_content) for d in Policies().invoke(question)]
        block = _documents(layout, found)
        if layout == "user-context":
            msgs: list[BaseMessage] = [SystemMessage(INTRO), HumanMessage(
                f"Context:\n{block}\n\nQuestion: {question}")]
        else:
            msgs = [SystemMessage(f"{INTRO} Answer from the documents below.\n{block}"),
                    HumanMessage(question)]
        bound = model.bind_tools([lookup_order])
        if layout == "late":  # the documents reach only the call after the tool call
            msgs[0], late = SystemMessage(INTRO), msgs[0]
        while True:
            answer = bound.invoke(msgs)
            msgs.append(answer)
            if not answer.tool_calls:
                return str(answer.content)
            msgs += [lookup_order.invoke(call) for call in answer.tool_calls]
            if layout == "late":
                msgs[0] = late

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        truth.answers.append(RunnableLambda(loop).with_config(run_name="desk").invoke(QUESTION))
    finally:
        instrumentor.uninstrument()
    return truth


LAYOUTS = {
    "pydantic-ai system_prompt parts": run_pydantic_ai_parts,
    "openai-agents stale handoff": run_openai_agents_stale_handoff,
    "langchain user-context": lambda p: run_langchain_layout(p, "user-context"),
    "langchain cited": lambda p: run_langchain_layout(p, "cited"),
    "langchain tagged": lambda p: run_langchain_layout(p, "tagged"),
    "langchain late": lambda p: run_langchain_layout(p, "late"),
}
