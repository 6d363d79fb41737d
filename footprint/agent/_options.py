"""``Agent(...)``'s arguments checked by type before anything is built.

Each wrong type becomes one ``ConfigError`` line that names the option,
quotes the value and says what to pass, instead of an ``AttributeError``
from deep inside a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from footprint._errors import ConfigError
from footprint._validate import brief, check_list, check_str
from footprint.graph import EscalationPolicy, ProviderChoice, SkillGraph
from footprint.injection import Injection, SkillTool

__all__ = ["check_agent_options", "check_provider"]


def check_provider(where: str, value: object) -> None:
    """A provider object has a string ``name`` and a callable ``complete``."""
    if isinstance(getattr(value, "name", None), str) and callable(getattr(value, "complete", None)):
        return
    raise ConfigError(
        f"{where} got {type(value).__name__} {brief(value)}, which is not a provider; pass a "
        "provider object such as OpenAIChat(...), AnthropicMessages(...) or ScriptedModel([...])"
    )


def _has(value: object, method: str) -> bool:
    return callable(getattr(value, method, None))


def _check_graph(graph: object) -> None:
    if graph is None or isinstance(graph, SkillGraph):
        return
    hint = ("call .build() on the builder first" if _has(graph, "build")
            else "pass skill_graph(...).build() or None")
    raise ConfigError(f"Agent(graph=...) got {type(graph).__name__} {brief(graph)}; {hint}")


def _check_items(options: Mapping[str, Any]) -> None:
    injections = check_list("Agent(injections=...)", options["injections"],
                            item="injections", example="injections=[define_steering(...)]")
    for inj in injections:
        if not isinstance(inj, Injection):
            raise ConfigError(
                f"Agent(injections=...) holds {type(inj).__name__} {brief(inj)}; pass "
                "injections made with define_skill, define_steering, define_fact or "
                "define_instruction")
    tools = check_list("Agent(tools=...)", options["tools"], item="tools",
                       example="tools=[lookup]")
    for t in tools:
        if not isinstance(t, SkillTool) and not callable(t):
            raise ConfigError(f"Agent(tools=...) holds {type(t).__name__} {brief(t)}; pass "
                              "functions or tool(fn, ...) objects")
    for h in check_list("Agent(hidden_skills=...)", options["hidden_skills"],
                        item="skill ids", example="hidden_skills=['admin']"):
        check_str("Agent(hidden_skills=...) item", h, fix="pass skill ids as strings")


def _check_brains(options: Mapping[str, Any]) -> None:
    providers = options["providers"]
    if providers is not None:
        if not isinstance(providers, Mapping):
            raise ConfigError(f"Agent(providers=...) got {type(providers).__name__} "
                              f"{brief(providers)}; pass {{skill_id: ProviderChoice(...)}}")
        for key, choice in providers.items():
            if not isinstance(choice, ProviderChoice):
                raise ConfigError(f"Agent(providers=...)[{key!r}] is {brief(choice)}; pass "
                                  "ProviderChoice(provider=..., model=...)")
    for name, cls in (("escalation", EscalationPolicy), ("decider", ProviderChoice)):
        value = options[name]
        if value is not None and not isinstance(value, cls):
            raise ConfigError(f"Agent({name}=...) got {type(value).__name__} {brief(value)}; "
                              f"pass {cls.__name__}(provider=..., ...) or None")


def _check_seams(options: Mapping[str, Any]) -> None:
    sink, clock, source = options["sink"], options["clock"], options["tool_source"]
    if sink is not None and not _has(sink, "emit"):
        raise ConfigError(f"Agent(sink=...) got {type(sink).__name__} {brief(sink)}; pass an "
                          "event sink (ListSink(), a Recorder, ...) with emit(event)")
    if clock is not None and not (_has(clock, "now_ns") and _has(clock, "monotonic_ns")):
        raise ConfigError(f"Agent(clock=...) got {type(clock).__name__} {brief(clock)}; pass "
                          "SystemClock(), StepClock() or an object with now_ns/monotonic_ns")
    if source is not None and not _has(source, "serve"):
        raise ConfigError(f"Agent(tool_source=...) got {type(source).__name__} "
                          f"{brief(source)}; pass an object with serve(call) or None")
    if options["model_source"] is not None:
        check_provider("Agent(model_source=...)", options["model_source"])
    seed = options["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"Agent(seed={brief(seed)}) must be a whole number; pass e.g. seed=7")


def _check_factory(factory: object) -> None:
    """``MODULE:ATTR``: a module (dotted, or a ``.py`` path) and a Python name."""
    if factory is None:
        return
    module, sep, attr = factory.rpartition(":") if isinstance(factory, str) else ("", "", "")
    if not sep or not module.strip() or not attr.isidentifier():
        raise ConfigError(f"Agent(factory={brief(factory)}) is not MODULE:ATTR; name the "
                          "function that builds this agent, e.g. factory='shop.agents:make_agent' "
                          "or factory='examples/planted/wrong_fact.py:make_agent'")


def check_agent_options(options: Mapping[str, Any]) -> None:
    """Refuse a wrongly typed ``Agent(...)`` argument before anything is built."""
    check_provider("Agent(provider=...)", options["provider"])
    check_str("Agent(model=...)", options["model"],
              fix="name the model the provider should use, e.g. model='gpt-4o-mini'")
    check_str("Agent(system_prompt=...)", options["system_prompt"],
              fix="pass the base system prompt as text", empty_ok=True)
    check_str("Agent(name=...)", options["name"], fix="pass a short agent name")
    _check_graph(options["graph"])
    _check_items(options)
    _check_brains(options)
    _check_seams(options)
    _check_factory(options["factory"])
