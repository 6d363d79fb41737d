"""Real agents built with pydantic-ai, the OpenAI Agents SDK and LangChain, run offline,
exported through the stock OTLP/HTTP exporter to a receiver on 127.0.0.1: the mapped runs
must match what each agent really did, and the documentation's fidelity table is this
measurement."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_support import check_generated
from foreign_agents import FRAMEWORKS, STALE, exporting, run_openai_agents_handoff
from ingest_support import Mapped, fidelity_row, fidelity_table, mapped_calls, record, tool_runs

from footprint.events import ContextInjected, LLMEnd, RunSource, RunStart, ToolEnd, ToolStart
from recorder import open_store
from recorder.ingest import Intake, Receiver

START, END = "<!-- fidelity-table:start -->\n", "<!-- fidelity-table:end -->"
EXPECTED_GAPS = {"openai-agents": {"tool definitions"}}
"""Columns a framework's instrumentation does not deliver (OpenInference's OpenAI Agents
spans carry no tool definitions on the model call)."""


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Mapped]:
    return {name: record(name, tmp_path_factory.mktemp(name)) for name in FRAMEWORKS}


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_given_a_real_framework_agent_when_its_trace_is_received_then_the_run_matches_what_it_did(
        mapped: dict[str, Mapped], framework: str) -> None:
    m = mapped[framework]
    assert len(m.runs) == m.truth.turns
    got, want = mapped_calls(m.runs), m.truth.calls
    assert [c.roles for c in got] == [c.roles for c in want]
    assert [c.system for c in got] == [c.system for c in want]
    assert [c.tool_results for c in got] == [c.tool_results for c in want]
    assert [c.usage for c in got] == [c.usage for c in want]
    if "tool definitions" not in EXPECTED_GAPS.get(framework, set()):
        assert [c.tools for c in got] == [c.tools for c in want]
    assert tool_runs(m.runs) == m.truth.tool_runs
    row = fidelity_row(m)
    assert row["answer"] == "yes"
    source = next(e for e in m.runs[0] if isinstance(e, RunSource))
    assert source.fidelity == "request-level"
    assert any(STALE in (e.raw_content or "") for e in m.runs[0]
               if isinstance(e, ContextInjected) and e.slot == "system-prompt")


def test_given_two_pydantic_ai_turns_when_mapped_then_one_conversation_names_each_origin(
        mapped: dict[str, Mapped]) -> None:
    runs = mapped["pydantic-ai"].runs
    starts = [next(e for e in r if isinstance(e, RunStart)) for r in runs]
    assert [s.turn for s in starts] == [0, 1]
    assert starts[0].conversation_id and starts[0].conversation_id == starts[1].conversation_id
    last_call = max(e.iteration for e in runs[1] if isinstance(e, ContextInjected))
    origins = [e.injection_id for e in runs[1] if isinstance(e, ContextInjected)
               and e.slot == "messages" and e.iteration == last_call]
    assert origins == ["turn0:person", "turn0:llm#1", "tool#call_1", "turn0:llm#2", "person",
                       "llm#1", "tool#call_3"]


def test_given_the_three_frameworks_when_graded_then_the_readme_table_is_what_was_measured(
        mapped: dict[str, Mapped]) -> None:
    rows = {name: fidelity_row(m) for name, m in mapped.items()}
    for name, row in rows.items():
        misses = {c for c, v in row.items() if v not in ("yes", "n/a (one turn)")
                  and c != "fidelity"}
        assert misses == EXPECTED_GAPS.get(name, set()), (name, row)
    fragment = fidelity_table(rows)
    check_generated(START, END, fragment, "the fidelity table")


def test_given_an_openai_agents_handoff_when_received_then_it_is_the_call_the_model_made(
        tmp_path: Path) -> None:
    m = record(run_openai_agents_handoff, tmp_path)
    events = m.runs[0]
    asked = [(c.id, c.name) for e in events if isinstance(e, LLMEnd) for c in e.tool_calls]
    ran = [(e.tool_call_id, e.tool_name) for e in events if isinstance(e, ToolStart)]
    assert asked == ran == [("call_h", "transfer_to_desk"), ("call_1", "lookup_order")]
    assert tool_runs(m.runs) == m.truth.tool_runs
    handoff = next(e for e in events if isinstance(e, ToolEnd) and e.tool_call_id == "call_h")
    assert handoff.error is False


def test_given_each_turn_received_by_a_new_receiver_when_mapped_then_the_turns_still_chain(
        tmp_path: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(f"answer to {len(messages)} messages")])

    history: list[ModelMessage] = []
    for question in ("Where is A-1047?", "And A-1048?"):  # a receiver restarted between turns
        receiver = Receiver(Intake(tmp_path), port=0).start()
        try:
            with exporting(receiver.endpoint) as provider:
                agent = Agent(FunctionModel(model), instructions="Be brief.", name="desk",
                              capabilities=[Instrumentation(settings=InstrumentationSettings(
                                  tracer_provider=provider))])
                history = agent.run_sync(question, message_history=history).all_messages()
        finally:
            receiver.stop()
    with open_store(tmp_path) as s:
        ids = [r[0] for r in s.rows("SELECT run_id FROM runs ORDER BY start_ns")]
        runs = [s.events(i) for i in ids]
    starts = [next(e for e in r if isinstance(e, RunStart)) for r in runs]
    assert [s.turn for s in starts] == [0, 1]
    assert starts[0].conversation_id and starts[0].conversation_id == starts[1].conversation_id
    assert [e.injection_id for e in runs[1] if isinstance(e, ContextInjected)
            and e.slot == "messages"] == ["turn0:person", "turn0:llm#1", "person"]
