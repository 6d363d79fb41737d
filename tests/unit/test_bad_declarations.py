"""Every public constructor and builder method refuses a bad declaration at once:
one ``ConfigError`` line that names the fix — never a library traceback, a silent
acceptance or a crash later in a run."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from footprint import ConfigError
from footprint.agent import Agent, ToolReturn, tool
from footprint.graph import (
    All,
    EscalationPolicy,
    Intent,
    Keywords,
    KeywordScorer,
    ProviderChoice,
    Regex,
    RoutingPolicy,
    skill_graph,
)
from footprint.injection import (
    Always,
    InjectionContext,
    SkillTool,
    SkillToolSchema,
    define_fact,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
)
from footprint.providers import ScriptedModel

MODEL = ScriptedModel(["ok"])
A = define_skill("a", "does a", "You do a.")
B = define_skill("b", "does b", "You do b.")


def lookup(q: str) -> str:
    """Look it up."""
    return q


LOOKUP = tool(lookup)


def _agent(**kw: Any) -> Callable[[], object]:
    kw.setdefault("provider", MODEL)
    kw.setdefault("model", "m")
    return lambda: Agent(**kw)


def _graph(fn: Callable[[Any], object]) -> Callable[[], object]:
    return lambda: fn(skill_graph(A, B))


# (label, the declaration, a word the message must contain: the fix it names)
BAD: list[tuple[str, Callable[[], object], str]] = [
    # ── Agent(...) ──
    ("agent provider str", _agent(provider="openai"), "provider object"),
    ("agent provider None", _agent(provider=None), "provider object"),
    ("agent provider class", _agent(provider=ScriptedModel), "provider object"),
    ("agent model empty", _agent(model=""), "name the model"),
    ("agent model int", _agent(model=4), "name the model"),
    ("agent system_prompt list", _agent(system_prompt=["a"]), "as text"),
    ("agent graph str", _agent(graph="g"), "skill_graph(...).build()"),
    ("agent graph builder", _agent(graph=skill_graph(A).entry(A)), ".build()"),
    ("agent injections str", _agent(injections=["x"]), "define_skill"),
    ("agent injections one", _agent(injections=A), "pass a list"),
    ("agent injections string", _agent(injections="abc"), "pass a list"),
    ("agent injections dict", _agent(injections={"a": A}), "pass a list"),
    ("agent tools one", _agent(tools=LOOKUP), "pass a list"),
    ("agent tools str", _agent(tools="lookup"), "pass a list"),
    ("agent tools item int", _agent(tools=[3]), "tool(fn"),
    ("agent tools dup", _agent(tools=[LOOKUP, LOOKUP]), "unique"),
    ("agent tools reserved", _agent(tools=[tool(lookup, name="read_skill")]), "rename"),
    ("agent hidden str", _agent(hidden_skills="secret"), "pass a list"),
    ("agent hidden unknown", _agent(hidden_skills=["ghost"]), "skills:"),
    ("agent hidden int", _agent(hidden_skills=[1]), "skill ids"),
    ("agent providers list", _agent(providers=[ProviderChoice(provider=MODEL)]),
     "ProviderChoice"),
    ("agent providers value str", _agent(providers={"a": "gpt-4o"}), "ProviderChoice"),
    ("agent escalation str", _agent(escalation="gpt-4o"), "EscalationPolicy("),
    ("agent decider str", _agent(decider="m"), "ProviderChoice("),
    ("agent posture", _agent(posture="loose"), "'rails'"),
    ("agent continuity", _agent(continuity="always"), "'conversation'"),
    ("agent max_iterations 0", _agent(max_iterations=0), ">= 1"),
    ("agent max_iterations str", _agent(max_iterations="5"), ">= 1"),
    ("agent max_iterations bool", _agent(max_iterations=True), ">= 1"),
    ("agent sink str", _agent(sink="events.jsonl"), "emit(event)"),
    ("agent clock str", _agent(clock="now"), "StepClock()"),
    ("agent seed str", _agent(seed="7"), "seed=7"),
    ("agent name empty", _agent(name=""), "agent name"),
    ("agent tool_source str", _agent(tool_source="cassette"), "serve(call)"),
    ("agent model_source str", _agent(model_source="replay"), "provider object"),
    ("agent model_timeout 0", _agent(model_timeout_s=0), "positive"),
    ("agent tool_timeout negative", _agent(tool_timeout_s=-1), "positive"),
    ("agent tool_timeout str", _agent(tool_timeout_s="5"), "positive"),
    ("agent tool_timeout inf", _agent(tool_timeout_s=float("inf")), "positive"),
    ("agent temperature str", _agent(temperature="hot"), "temperature"),
    ("agent max_tokens 0", _agent(max_tokens=0), "max_tokens"),
    ("agent posture without graph", _agent(posture="rails"), "graph="),
    # ── brains ──
    ("escalation provider str", lambda: EscalationPolicy(provider="gpt-4o", after_refusals=2),
     "model="),
    ("escalation after 0", lambda: EscalationPolicy(provider=MODEL, after_refusals=0),
     "after_refusals=2"),
    ("escalation after str", lambda: EscalationPolicy(provider=MODEL, after_refusals="2"),
     "after_refusals=2"),
    ("escalation model empty", lambda: EscalationPolicy(provider=MODEL, after_refusals=1,
                                                        model=""), "model name"),
    ("choice provider str", lambda: ProviderChoice(provider="openai"), "provider object"),
    ("choice model int", lambda: ProviderChoice(provider=MODEL, model=4), "model name"),
    ("routing policy margin", lambda: RoutingPolicy(near_tie_margin=2), "[0, 1]"),
    ("routing policy menu", lambda: RoutingPolicy(menu_size=0), ">= 1"),
    # ── graph builder ──
    ("builder skill str", lambda: skill_graph("a"), "define_skill"),
    ("builder skill fact", lambda: skill_graph(define_fact("f", data="x")), "define_skill"),
    ("entry skill int", _graph(lambda g: g.entry(3)), "define_skill"),
    ("entry skill empty", _graph(lambda g: g.entry("")), "define_skill"),
    ("entry when True", _graph(lambda g: g.entry(A, when=True)), "function of the context"),
    ("entry when str", _graph(lambda g: g.entry(A, when="refund")), "function of the context"),
    ("entry match str", _graph(lambda g: g.entry(A, match="refund")), "Keywords("),
    ("entry match list", _graph(lambda g: g.entry(A, match=["refund"])), "Keywords("),
    ("entry examples str", _graph(lambda g: g.entry(A, match=Keywords(("x",)),
                                                    examples="I want x")), "pass a list"),
    ("entry both", _graph(lambda g: g.entry(A, when=lambda c: True, match=Keywords(("x",)))),
     "give one condition"),
    ("entry label int", _graph(lambda g: g.entry(A, label=3)), "short text"),
    ("route from int", _graph(lambda g: g.route(1, B)), "define_skill"),
    ("route to None", _graph(lambda g: g.route(A, None)), "define_skill"),
    ("route when str", _graph(lambda g: g.route(A, B, when="x")), "function of the tool result"),
    ("route when True", _graph(lambda g: g.route(A, B, when=True)),
     "function of the tool result"),
    ("route on_tool_return int", _graph(lambda g: g.route(A, B, on_tool_return=3)),
     "re.compile"),
    ("route on_tool_return empty", _graph(lambda g: g.route(A, B, on_tool_return="")),
     "re.compile"),
    ("route on_tool_status bad", _graph(lambda g: g.route(A, B, on_tool_status="ok")),
     "one of success"),
    ("route on_tool_status int", _graph(lambda g: g.route(A, B, on_tool_status=3)),
     "success"),
    ("route guard str", _graph(lambda g: g.route(A, B, guard="risk < high")),
     "guard={'risk'"),
    ("route guard list", _graph(lambda g: g.route(A, B, guard=[("risk", "lt")])),
     "guard={'risk'"),
    ("route label list", _graph(lambda g: g.route(A, B, label=["x"])), "short text"),
    ("never_routes str", _graph(lambda g: g.never_routes("abc")), "pass a list"),
    ("never_routes int", _graph(lambda g: g.never_routes(3)), "pass a list"),
    ("classify str", _graph(lambda g: g.classify("keyword")), "KeywordScorer()"),
    ("classify class", _graph(lambda g: g.classify(KeywordScorer)), "KeywordScorer()"),
    ("classify policy dict", _graph(lambda g: g.classify(KeywordScorer(),
                                                         {"menu_size": 2})), "RoutingPolicy("),
    ("entry_by str", _graph(lambda g: g.entry_by("embed")), "KeywordScorer()"),
    ("build known_tools str", _graph(lambda g: g.entry(A).build(known_tools="lookup")),
     "pass a list"),
    ("build known_tools int item", _graph(lambda g: g.entry(A).build(known_tools=[3])),
     "tool name"),
    ("build check bad", _graph(lambda g: g.entry(A).build(check="strict")), "'throw'"),
    ("build check bool", _graph(lambda g: g.entry(A).build(check=True)), "'throw'"),
    # ── matchers ──
    ("keywords str", lambda: Keywords("refund"), "wrap a single keyword"),
    ("keywords empty item", lambda: Keywords(("",)), "non-empty"),
    ("keywords int", lambda: Keywords((3,)), "non-empty"),
    ("regex int", lambda: Regex(3), "re.compile"),
    ("regex bad", lambda: Regex("("), "fix the pattern"),
    ("all str", lambda: All("refund"), "All(["),
    ("all item str", lambda: All(("refund",)), "Keywords("),
    ("intent empty", lambda: Intent(""), "describe the intent"),
    ("intent examples str", lambda: Intent("refund", "money back"), "pass a list"),
    # ── factories ──
    ("skill tools one", lambda: define_skill("s", "d", "b", tools=LOOKUP), "pass a list"),
    ("skill tools fn", lambda: define_skill("s", "d", "b", tools=[lookup]), "tool(fn"),
    ("skill tools str", lambda: define_skill("s", "d", "b", tools="lookup"), "pass a list"),
    ("skill produces str", lambda: define_skill("s", "d", "b", produces="doc/pdf"),
     "produces=['doc/pdf']"),
    ("skill consumes str", lambda: define_skill("s", "d", "b", consumes="doc/pdf"),
     "consumes=['doc/pdf']"),
    ("skill steps str", lambda: define_skill("s", "d", "b", steps="verify"),
     "a list of SkillStep"),
    ("skill id empty", lambda: define_skill("", "d", "b"), "id"),
    ("skill description None", lambda: define_skill("s", None, "b"), "description"),
    ("skill body int", lambda: define_skill("s", "d", 3), "body"),
    ("skill surface", lambda: define_skill("s", "d", "b", surface_mode="hidden"), "auto"),
    ("steering empty", lambda: define_steering("s", ""), "prompt"),
    ("steering list", lambda: define_steering("s", ["be brief"]), "prompt"),
    ("instruction both", lambda: define_instruction("i", prompt="x", prompt_template="y"),
     "prompt"),
    ("instruction when str", lambda: define_instruction("i", prompt="x", active_when="x"),
     "active_when"),
    ("instruction slot", lambda: define_instruction("i", prompt="x", slot="tools"), "slot"),
    ("instruction role", lambda: define_instruction("i", prompt="x", slot="messages",
                                                    role="tool"), "role"),
    ("fact empty", lambda: define_fact("f", data=""), "data"),
    ("fact id int", lambda: define_fact(3, data="x"), "id"),
    ("injection messages one", lambda: define_injection("i", "custom", Always(),
                                                        messages="hi"), "pass a list"),
    ("injection tools one", lambda: define_injection("i", "custom", Always(), tools=LOOKUP),
     "pass a list"),
    ("injection flavor", lambda: define_injection("i", "bogus", "always", system_prompt="x"),
     "flavor"),
    # ── tools ──
    ("tool not callable", lambda: tool("lookup"), "function"),
    ("tool timeout 0", lambda: tool(lookup, timeout_s=0), "timeout_s=30"),
    ("tool timeout str", lambda: tool(lookup, timeout_s="5"), "timeout_s=30"),
    ("tool name int", lambda: tool(lookup, name=3), "name="),
    ("tool schema str", lambda: tool(lookup, schema="object"), "JSON schema"),
    ("tool deterministic str", lambda: tool(lookup, deterministic="yes"), "True or False"),
    ("skilltool execute str", lambda: SkillTool(schema=LOOKUP.schema, execute="run"),
     "function"),
    ("skilltool schema dict", lambda: SkillTool(schema={"name": "x"}, execute=lookup),
     "SkillToolSchema("),
    ("skilltool timeout neg", lambda: SkillTool(schema=LOOKUP.schema, execute=lookup,
                                                timeout_s=-1), "timeout_s=30"),
    ("schema name empty", lambda: SkillToolSchema(name="", description="d"), "name the tool"),
    ("schema input list", lambda: SkillToolSchema(name="x", description="d", input_schema=[]),
     "JSON schema"),
    ("tool return status", lambda: ToolReturn(content="x", status="ok"), "one of"),
    ("tool return effects dict", lambda: ToolReturn(content="x", effects={"kind": "x"}),
     "wrap one effect"),
    ("tool return effect unknown", lambda: ToolReturn(content="x", effects=[{"kind": "x"}]),
     "propose-transition"),
    # ── InjectionContext ──
    ("ctx tool_results dicts", lambda: InjectionContext(
        iteration=1, user_message="", tool_results=[{"tool_name": "t", "result": "r"}]),
     "ToolResult(tool_name"),
    ("ctx tool_results str", lambda: InjectionContext(iteration=1, user_message="",
                                                      tool_results="r"), "pass a list"),
    ("ctx last_tool_result dict", lambda: InjectionContext(
        iteration=1, user_message="", last_tool_result={"tool_name": "t"}),
     "ToolResult(tool_name"),
    ("ctx activated str", lambda: InjectionContext(iteration=1, user_message="",
                                                   activated_injection_ids="abc"),
     "pass a list"),
    ("ctx activated ints", lambda: InjectionContext(iteration=1, user_message="",
                                                    activated_injection_ids=[1]),
     "list of ids"),
    ("ctx hidden str", lambda: InjectionContext(iteration=1, user_message="",
                                                hidden_skill_ids="secret"), "pass a list"),
    ("ctx parked str", lambda: InjectionContext(iteration=1, user_message="",
                                                parked_ids="p"), "pass a list"),
    ("ctx iteration str", lambda: InjectionContext(iteration="1", user_message=""),
     "whole number"),
    ("ctx user_message None", lambda: InjectionContext(iteration=1, user_message=None),
     "as text"),
    ("ctx history str", lambda: InjectionContext(iteration=1, user_message="",
                                                 history="hello"), "pass a list"),
    ("ctx history dicts", lambda: InjectionContext(iteration=1, user_message="",
                                                   history=[{"role": "user"}]),
     "HistoryMessage("),
    ("ctx max_iterations str", lambda: InjectionContext(iteration=1, user_message="",
                                                        max_iterations="5"), "whole number"),
]


def test_the_table_covers_at_least_a_hundred_declarations() -> None:
    assert len(BAD) >= 100
    assert len({label for label, _, _ in BAD}) == len(BAD)


@pytest.mark.parametrize(("label", "declare", "fix"), BAD, ids=[b[0] for b in BAD])
def test_given_a_bad_declaration_when_made_then_one_line_config_error_naming_the_fix(
    label: str, declare: Callable[[], object], fix: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        declare()
    message = str(raised.value)
    assert "\n" not in message, message
    assert fix in message, f"{label}: {message!r} does not name {fix!r}"
    assert not re.search(r"\.\.$", message), message
