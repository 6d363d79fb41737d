"""Agent variants: the same agent rebuilt with an option changed or injections removed."""

from __future__ import annotations

import pytest
from agent_support import make_agent, skill

from footprint import Agent, ConfigError, FunctionModel, define_fact, skill_graph
from footprint.events import ListSink
from footprint.providers import LLMRequest


def _model(request: LLMRequest) -> str:
    return "DECLINED" if "30 days" in request.system else "APPROVED"


def _agent(sink: ListSink) -> Agent:
    return make_agent(FunctionModel(_model), sink, injections=[
        define_fact("policy", "Refunds within 30 days."), define_fact("hours", "Open 9-17.")])


def test_given_an_agent_when_a_fact_is_removed_then_the_variant_answers_without_it() -> None:
    sink = ListSink()
    agent = _agent(sink)
    assert agent.run_sync("refund?").answer == "DECLINED"
    variant = agent.without("policy")
    assert variant.run_sync("refund?").answer == "APPROVED"
    assert [i.id for i in variant.setup.injections] == ["hours"]
    assert [i.id for i in agent.setup.injections] == ["policy", "hours"]


def test_given_an_unknown_id_when_removed_then_the_error_suggests_the_closest() -> None:
    agent = _agent(ListSink())
    with pytest.raises(ConfigError, match=r"without\('polcy'\).*did you mean 'policy'"):
        agent.without("polcy")


def test_given_a_graph_skill_when_removed_then_the_variant_is_refused() -> None:
    a, b = skill("a"), skill("b")
    graph = skill_graph(a, b).entry(a).route("a", "b", on_tool_return="t").build(check="off")
    agent = make_agent(FunctionModel(_model), ListSink(), graph=graph)
    with pytest.raises(ConfigError, match="is a skill of the graph"):
        agent.without("b")


def test_given_an_unknown_option_when_a_variant_is_built_then_it_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown option"):
        _agent(ListSink()).variant(modle="x")


def test_given_a_variant_with_another_model_when_run_then_it_calls_that_model() -> None:
    sink = ListSink()
    variant = _agent(sink).variant(model="other-model")
    variant.run_sync("hi")
    assert {getattr(e, "model", None) for e in sink.of_type("llm.start")} == {"other-model"}


def test_given_a_factory_reference_when_the_agent_runs_then_run_configured_records_it() -> None:
    sink = ListSink()
    _agent(sink).variant(factory="examples/planted/wrong_fact.py:make_agent").run_sync("refund?")
    configured = next(e for e in sink.events if e.type == "run.configured")
    assert configured.options["factory"] == "examples/planted/wrong_fact.py:make_agent"
    plain = ListSink()
    _agent(plain).run_sync("refund?")
    assert "factory" not in next(e for e in plain.events if e.type == "run.configured").options


@pytest.mark.parametrize("bad", ["make_agent", "shop:", ":make_agent", "shop:make-agent", 7])
def test_given_a_factory_not_module_attr_when_built_then_the_error_quotes_it(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"Agent\(factory=.*is not MODULE:ATTR.*e\.g\."):
        _agent(ListSink()).variant(factory=bad)
