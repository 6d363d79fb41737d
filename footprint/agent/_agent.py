"""``Agent``: the reference host. It runs the skill graph correctly, calls models
and tools, and emits every event of the catalog from exactly one place each."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from footprint._errors import ConfigError, RunError, did_you_mean
from footprint.agent._checkpoint import Conversation, conversation_from, conversation_to
from footprint.agent._clock import Clock, SystemClock, new_run_id
from footprint.agent._emitter import RunEmitter
from footprint.agent._ids import IdSource, RandomIds
from footprint.agent._loop import TurnOutcome, run_iterations
from footprint.agent._options import check_agent_options
from footprint.agent._runmeta import RunMeta, run_meta
from footprint.agent._setup import AgentSetup, Posture, ToolLike, build_setup
from footprint.agent._sources import ToolSource
from footprint.agent._state import PERSON, Evidence, RunState
from footprint.agent._sync import run_to_end
from footprint.agent._turn import declare_run, route_turn_stage
from footprint.agent._workers import ToolWorkers
from footprint.events import EventSink, NullSink, RunEnd, RunFailed, RunStart, SkillDeactivated
from footprint.graph import EscalationPolicy, ProviderChoice, SkillGraph
from footprint.injection import Injection
from footprint.providers import Message, Provider

__all__ = ["DEFAULT_TOOL_TIMEOUT_S", "Agent", "RunResult"]

DEFAULT_TOOL_TIMEOUT_S = 120.0
"""How long one tool call may run when neither the tool nor the agent says otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """What one run answered, and how."""

    answer: str
    run_id: str
    turn: int
    iterations: int
    input_tokens: int
    output_tokens: int
    cursor: str | None
    stopped_early: str | None = None


def _no_running_loop(what: str, instead: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RunError(f"{what} was called inside a running event loop; use `{instead}` there instead")


def _checked_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"Agent(seed=) needs an int; got {seed!r}")
    return seed


def _held_providers(setup: AgentSetup) -> list[Provider]:
    """Every provider the agent may call, once each: its own, brains, decider, replay."""
    found: list[Provider | None] = [setup.provider, setup.model_source]
    brains = setup.brains
    if brains is not None:
        found.extend(b.provider for b in brains.by_skill.values())
        found.extend(c.provider for c in (brains.escalation, brains.decider) if c is not None)
    held: dict[int, Provider] = {}
    for provider in found:
        if provider is not None:
            held.setdefault(id(provider), provider)
    return list(held.values())


def _checked_ids(ids: object) -> IdSource:
    if ids is None:
        return RandomIds()
    if not isinstance(ids, IdSource):
        raise ConfigError(f"Agent(ids=) needs an IdSource with new_id(now_ns) -> str, such as "
                          f"RandomIds() or SeededIds(7); got {ids!r}")
    return ids


_RUNTIME_OPTIONS = ("sink", "clock", "seed", "ids")


def _frozen_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """``Agent(...)``'s arguments as given, minus ``self``, with lists frozen to tuples."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in given.items() if k != "self"}


def _setup_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options ``build_setup`` folds: all but the run-time sink, clock, seed and ids."""
    return {k: v for k, v in options.items() if k not in _RUNTIME_OPTIONS}


class Agent:
    """An LLM agent whose every decision is an event.

    ``await agent.run(message)`` (or ``agent.run_sync``) runs one turn of a
    new conversation; ``follow_up`` continues the last one; ``checkpoint()``
    returns the conversation as plain JSON that ``run(..., continue_from=)``
    resumes. The clock is injectable so runs replay exactly; ``seed`` names the
    re-run (``why`` re-runs an agent with seeds 0..N-1) and is readable as
    ``agent.seed`` by models and tools that sample. Run and conversation ids come
    from ``ids`` (default ``RandomIds()``: operating-system randomness, unique
    across processes and machines, independent of clock and seed);
    ``SeededIds(n)`` makes them repeat exactly, for golden files only.
    ``tool_source`` and ``model_source`` are the replay seam: when set, plain
    tools and model calls are served by them instead of run (a recorded run
    re-executed offline); the events still name the tools and brains as declared.
    ``max_tokens``, ``temperature`` and ``stop`` go into every model request
    (they win over a provider's own defaults); ``model_timeout_s`` bounds one
    model call with any provider and ends the run with a ``RunError`` naming it.
    ``tool_timeout_s`` bounds one tool call (a tool's own ``tool(timeout_s=)``
    wins; ``None`` waits forever): a call still running then ends with a
    ``tool.end`` whose status ``failure`` the host assigned (``status_by``)
    and whose ``timeout_s`` says why, and the run goes on. Plain tools run on
    worker threads the agent keeps across runs (started on first use). The
    run's ``seed`` reaches every model request (``LLMRequest.seed``).
    ``await agent.aclose()`` (``close()`` outside a loop, or leaving ``with
    agent:``) closes the pooled HTTP clients of the providers the agent holds
    and ends the idle tool workers (as the agent's garbage collection and the
    interpreter's exit do). The HTTP connections belong to the process, not to an
    event loop: ``run_sync`` after ``run_sync`` reuses them, and they are closed
    at interpreter exit.
    ``factory`` (``"MODULE:ATTR"``, MODULE a dotted module or a ``.py`` path)
    names the function that builds this agent; it is recorded on
    ``run.configured`` so ``footprint lens`` can rebuild the agent for a causal
    search without ``--agent``.
    """

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        system_prompt: str = "",
        injections: Sequence[Injection] = (),
        tools: Sequence[ToolLike] = (),
        graph: SkillGraph | None = None,
        providers: Mapping[str, ProviderChoice] | None = None,
        escalation: EscalationPolicy | None = None,
        decider: ProviderChoice | None = None,
        posture: Posture | None = None,
        continuity: Literal["conversation"] | None = None,
        max_iterations: int = 10,
        sink: EventSink | None = None,
        clock: Clock | None = None,
        seed: int = 0,
        ids: IdSource | None = None,
        name: str = "agent",
        hidden_skills: Sequence[str] = (),
        temperature: float | None = None,
        tool_source: ToolSource | None = None,
        model_source: Provider | None = None,
        max_tokens: int | None = None,
        stop: str | Sequence[str] | None = None,
        model_timeout_s: float | None = None,
        tool_timeout_s: float | None = DEFAULT_TOOL_TIMEOUT_S,
        release: str | None = None,
        environment: str | None = None,
        factory: str | None = None,
    ) -> None:
        # every option as given (lists frozen), so variant() can rebuild this agent
        self._options: dict[str, Any] = _frozen_options(locals())
        check_agent_options(self._options)
        self.setup: AgentSetup = build_setup(**_setup_options(self._options))
        self.sink: EventSink = sink if sink is not None else NullSink()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.seed: int = _checked_seed(seed)
        self.ids: IdSource = _checked_ids(ids)
        self._conversation: Conversation | None = None
        self._meta = RunMeta()
        self._workers: ToolWorkers | None = None
        self._release: weakref.finalize[[], Agent] | None = None

    # ── variants (counterfactual re-runs, replay) ────────────────────────

    def variant(self, **overrides: Any) -> Agent:
        """A new agent built from this one's options with ``overrides`` applied."""
        unknown = sorted(set(overrides) - set(self._options))
        if unknown:
            raise ConfigError(
                f"variant() got unknown option(s) {unknown}; options are "
                f"{', '.join(sorted(self._options))}{did_you_mean(unknown[0], self._options)}"
            )
        return Agent(**{**self._options, **overrides})

    def without(self, *injection_ids: str, **overrides: Any) -> Agent:
        """The same agent minus the named injections (a counterfactual variant)."""
        declared: tuple[Injection, ...] = self._options["injections"]
        known = [i.id for i in declared]
        graph: SkillGraph | None = self._options["graph"]
        for iid in injection_ids:
            if graph is not None and iid in graph.skill_ids:
                raise ConfigError(
                    f"without({iid!r}): {iid!r} is a skill of the graph, and removing a node "
                    "would change the graph itself; remove injections (facts, steering, "
                    "instructions, open skills) or build a variant graph"
                )
            if iid not in known:
                raise ConfigError(
                    f"without({iid!r}): no injection has that id; declared: "
                    f"{', '.join(known) or 'none'}{did_you_mean(iid, known)}"
                )
        kept = tuple(i for i in declared if i.id not in injection_ids)
        return self.variant(injections=kept, **overrides)

    # ── public API ────────────────────────────────────────────────────────

    async def run(self, message: str, *,
                  continue_from: Mapping[str, Any] | None = None,
                  user: str | None = None, session: str | None = None,
                  tags: Sequence[str] = (),
                  metadata: Mapping[str, Any] | None = None) -> RunResult:
        """Run one turn: a new conversation, or the one ``continue_from`` holds.

        ``user``, ``session``, ``tags`` and ``metadata`` label the run: they are
        recorded on ``run.start``, are columns of the ``runs`` view and
        attributes of the run's root span.
        """
        meta = run_meta(user=user, session=session, tags=tags, metadata=metadata)
        conv = conversation_from(continue_from) if continue_from is not None else None
        return await self._turn(message, conv or self._new_conversation(), meta)

    def run_sync(self, message: str, *,
                 continue_from: Mapping[str, Any] | None = None,
                 user: str | None = None, session: str | None = None,
                 tags: Sequence[str] = (),
                 metadata: Mapping[str, Any] | None = None) -> RunResult:
        """``run`` for code without an event loop."""
        _no_running_loop("run_sync()", "await agent.run(message)")
        return run_to_end(self.run(
            message, continue_from=continue_from, user=user, session=session, tags=tags,
            metadata=metadata))

    async def follow_up(self, message: str, *, user: str | None = None,
                        session: str | None = None, tags: Sequence[str] | None = None,
                        metadata: Mapping[str, Any] | None = None) -> RunResult:
        """The next turn of this agent's last conversation.

        Labels not given are the previous turn's.
        """
        if self._conversation is None:
            raise RunError("follow_up() needs an earlier run(); call run(message) first")
        last = self._meta
        meta = run_meta(user=user if user is not None else last.user,
                        session=session if session is not None else last.session,
                        tags=tags if tags is not None else last.tags,
                        metadata=metadata if metadata is not None else last.metadata)
        return await self._turn(message, self._conversation, meta)

    def follow_up_sync(self, message: str, *, user: str | None = None,
                       session: str | None = None, tags: Sequence[str] | None = None,
                       metadata: Mapping[str, Any] | None = None) -> RunResult:
        """``follow_up`` for code without an event loop."""
        _no_running_loop("follow_up_sync()", "await agent.follow_up(message)")
        return run_to_end(self.follow_up(
            message, user=user, session=session, tags=tags, metadata=metadata))

    async def aclose(self) -> None:
        """Release what the agent holds: the pooled connections of every provider (a
        provider without ``aclose`` is left alone) and the worker threads kept for plain
        tools. Both come back on the next run, so closing a variant that shares
        providers is harmless. ``run_sync``/``follow_up_sync`` keep the connections for
        the next run (the process closes them at exit).
        """
        await self._close_providers()
        self._end_workers()

    def close(self) -> None:
        """``aclose`` for code without a running event loop."""
        _no_running_loop("close()", "await agent.aclose()")
        for provider in _held_providers(self.setup):
            closer = getattr(provider, "close", None)
            if callable(closer):
                closer()
        self._end_workers()

    async def _close_providers(self) -> None:
        for provider in _held_providers(self.setup):
            closer = getattr(provider, "aclose", None)
            if callable(closer):
                await closer()

    def _end_workers(self) -> None:
        """End the worker threads kept for plain tools (a later run starts new ones)."""
        release, self._release, self._workers = self._release, None, None
        if release is not None:
            release()  # the pool's close, once (the finalizer is then dead)

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def checkpoint(self) -> dict[str, Any]:
        """The last conversation as plain JSON (for ``run(..., continue_from=)``)."""
        if self._conversation is None:
            raise RunError("checkpoint() needs an earlier run(); nothing to save yet")
        return conversation_to(self._conversation)

    # ── one turn ──────────────────────────────────────────────────────────

    def _new_conversation(self) -> Conversation:
        return Conversation(conversation_id=new_run_id(self.clock, self.ids), turns=0,
                            history=[], cursor=None)

    def _start_state(self, message: str, conv: Conversation) -> RunState:
        if not isinstance(message, str) or not message.strip():
            raise ConfigError(f"run() needs a non-empty message; got {message!r}")
        history = [*conv.history, Message(role="user", content=message, origin=PERSON)]
        cursor = conv.cursor if self.setup.continuity == "conversation" else None
        return RunState(user_message=message, history=history, cursor=cursor, seed=self.seed,
                        workers=self._tool_workers())

    def _tool_workers(self) -> ToolWorkers:
        """The agent's workers for plain tools; made on first use, one idle per tool kept."""
        if self._workers is None:
            tools = len(self.setup.baseline_tools) + len(self.setup.skill_tools)
            self._workers = ToolWorkers(keep=max(1, min(tools, 8)))
            # closed by close(), or when the agent is collected, or at the interpreter's exit
            self._release = weakref.finalize(self, self._workers.close)
        return self._workers

    async def _turn(self, message: str, conv: Conversation, meta: RunMeta) -> RunResult:
        state = self._start_state(message, conv)
        self._meta = meta
        em = RunEmitter(self.sink, self.clock, new_run_id(self.clock, self.ids), conv.turns)
        t0 = self.clock.monotonic_ns()
        base = Evidence(declare_run(self.setup, em), "run", "baseline")
        em.emit(RunStart, "run", user_message=message, conversation_id=conv.conversation_id,
                user_id=meta.user, session_id=meta.session, tags=meta.tags,
                metadata=meta.metadata, release=self.setup.release,
                environment=self.setup.environment)
        try:
            await route_turn_stage(self.setup, state, em)
            outcome = await run_iterations(self.setup, state, em, base)
        except Exception as exc:
            em.emit(RunFailed, f"engine#{em.iteration}", error_type=type(exc).__name__,
                    message=str(exc), stage="run")
            raise
        self._finish(em, state, outcome, (self.clock.monotonic_ns() - t0) / 1e6)
        self._conversation = Conversation(
            conversation_id=conv.conversation_id, turns=conv.turns + 1,
            history=state.history, cursor=state.cursor)
        return RunResult(answer=outcome.answer, run_id=em.run_id, turn=conv.turns,
                         iterations=outcome.iterations, input_tokens=state.input_tokens,
                         output_tokens=state.output_tokens, cursor=state.cursor,
                         stopped_early=outcome.stopped_early)

    def _finish(self, em: RunEmitter, state: RunState, outcome: TurnOutcome,
                duration_ms: float) -> None:
        for sid in list(state.active_skills):
            em.emit(SkillDeactivated, "run", skill_id=sid, reason="turn-end")
        em.emit(RunEnd, "run", final_content=outcome.answer,
                total_input_tokens=state.input_tokens, total_output_tokens=state.output_tokens,
                iteration_count=outcome.iterations, duration_ms=duration_ms,
                stopped_early=outcome.stopped_early,
                pending_tool_calls=outcome.pending_tool_calls, wrapped_up=outcome.wrapped_up,
                dropped_events=em.sink_errors)
