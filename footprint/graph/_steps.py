"""Stepped skills (spec §2.9): the procedure plan, its pointer, and every text.

Pure data in, data out. The host owns the loop and emits
``skill.step_advanced`` / ``skill.step_skipped`` / ``skill.steps_unfinished``
from the outcomes returned here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from footprint._errors import ConfigError
from footprint.injection._types import Injection, LLMActivated, StepPointer

__all__ = [
    "SKIP_STEP_INPUT_SCHEMA",
    "SKIP_STEP_TOOL",
    "FinalVerdict",
    "OnSkip",
    "SkipOutcome",
    "StepAdvance",
    "StepPlan",
    "StepSpec",
    "advance",
    "check_steps_for_agent",
    "current_step",
    "decide_final",
    "held_out_tools",
    "plan_of",
    "read_skill_suffix",
    "rekey_pointer",
    "skip_step",
    "skip_step_description",
    "step_description_prefix",
    "step_plans",
    "step_tool_description",
]

OnSkip: TypeAlias = Literal["advance", "hold"]
SKIP_STEP_TOOL = "skip_step"
SKIP_STEP_INPUT_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "type": "object",
        "properties": {
            "reason": {
                "type": "string",
                "description": "Why the current step cannot or need not be done.",
            }
        },
        "required": ["reason"],
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSpec:
    """One declared step: 1-based ``index``, the ``tool`` it runs, a ``note``."""

    index: int
    tool: str
    note: str
    produces: tuple[str, ...] = ()
    consumes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StepPlan:
    """A stepped skill's procedure, folded from its ``steps`` metadata."""

    skill_id: str
    steps: tuple[StepSpec, ...]
    on_skip: OnSkip = "advance"

    @property
    def total(self) -> int:
        return len(self.steps)

    def step(self, index: int) -> StepSpec | None:
        return self.steps[index - 1] if 1 <= index <= len(self.steps) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepAdvance:
    """A clean call to the current step's tool: the new pointer and the evidence."""

    pointer: StepPointer
    step: StepSpec
    total: int
    completed: bool
    result_suffix: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SkipOutcome:
    """What ``skip_step(reason)`` did.

    ``kind="teach"``: nothing to skip or no reason; ``text`` teaches, no event.
    ``kind="skipped"``: emit ``step_skipped``; ``pointer`` moved under
    ``advance`` and stayed under ``hold``; ``text`` replaces the tool result.
    """

    kind: Literal["skipped", "teach"]
    text: str
    pointer: StepPointer | None
    skill_id: str | None = None
    step: StepSpec | None = None
    total: int = 0
    policy: OnSkip | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FinalVerdict:
    """A final answer arrived with steps left: what the host does about it."""

    action: Literal["nudged", "accepted", "cut-short"]
    skill_id: str
    remaining: tuple[StepSpec, ...]
    total: int
    nudge_text: str | None = None


# ── reading the declaration ───────────────────────────────────────────────


def step_field(step: object, name: str) -> Any:
    if isinstance(step, Mapping):
        return step.get(name)
    return getattr(step, name, None)


def as_kinds(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, Iterable) else ()


def _spec(skill_id: str, index: int, raw: object, own_tools: Collection[str]) -> StepSpec:
    tool, note = step_field(raw, "tool"), step_field(raw, "note")
    where = f"define_skill({skill_id}) step {index}"
    if not isinstance(tool, str) or not tool.strip():
        raise ConfigError(f"{where}: tool {tool!r} is blank; name one of the skill's own tools.")
    if not isinstance(note, str) or not note.strip():
        raise ConfigError(f"{where}: note {note!r} is blank; say what the step does.")
    if tool not in own_tools:
        raise ConfigError(
            f"{where}: tool {tool!r} is not one of the skill's own tools "
            f"{sorted(own_tools)}; add it to the skill's tools or fix the name."
        )
    return StepSpec(
        index=index, tool=tool, note=note,
        produces=as_kinds(step_field(raw, "produces")),
        consumes=as_kinds(step_field(raw, "consumes")),
    )


def plan_of(skill: Injection) -> StepPlan | None:
    """The skill's step plan, or ``None`` when it declares no ``steps``."""
    raw = skill.metadata.get("steps")
    if raw is None:
        return None
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence) or not raw:
        raise ConfigError(
            f"define_skill({skill.id}): steps={raw!r} must be a non-empty list of "
            "SkillStep(tool, note); drop `steps` for a skill without a procedure."
        )
    own = {t.schema.name for t in skill.inject.tools}
    specs = tuple(_spec(skill.id, i, s, own) for i, s in enumerate(raw, start=1))
    raw_skip = skill.metadata.get("on_skip") or "advance"
    on_skip: OnSkip = "hold" if raw_skip == "hold" else "advance"
    if raw_skip != on_skip:
        raise ConfigError(
            f"define_skill({skill.id}): on_skip={raw_skip!r} is not a policy; "
            "use 'advance' or 'hold'."
        )
    return StepPlan(skill_id=skill.id, steps=specs, on_skip=on_skip)


def step_plans(injections: Iterable[Injection]) -> Mapping[str, StepPlan]:
    """Every stepped skill's plan, keyed by skill id (declaration order)."""
    plans: dict[str, StepPlan] = {}
    for inj in injections:
        if inj.flavor == "skill" and (plan := plan_of(inj)) is not None:
            plans.setdefault(inj.id, plan)
    return MappingProxyType(plans)


def check_steps_for_agent(
    injections: Sequence[Injection],
    *,
    graph_mounted: bool,
    open_skill_ids: Collection[str] = (),
    tool_names: Iterable[str] = (),
) -> Mapping[str, StepPlan]:
    """Run §2.9's agent-build refusals; return the plans when none applies.

    ``tool_names`` are the agent's baseline tool names (skills' tools are
    read from the injections).
    """
    plans = step_plans(injections)
    if not plans:
        return plans
    names = set(tool_names) | {t.schema.name for i in injections for t in i.inject.tools}
    if SKIP_STEP_TOOL in names:
        raise ConfigError(
            f"a tool is named {SKIP_STEP_TOOL!r} while stepped skills {sorted(plans)} exist; "
            "that name is reserved for the built-in skip tool: rename your tool."
        )
    by_id = {i.id: i for i in injections}
    for sid in plans:
        if graph_mounted and sid in open_skill_ids:
            raise ConfigError(
                f"skill {sid!r} declares steps but is an open skill of the graph (no edge "
                "leads to it), so no tenure can hold it: add an entry or route to it, "
                "or drop its steps."
            )
        if not graph_mounted and not isinstance(by_id[sid].trigger, LLMActivated):
            raise ConfigError(
                f"skill {sid!r} declares steps but its trigger is "
                f"{by_id[sid].trigger.kind!r}; without a skill graph only a read_skill "
                "(llm-activated) skill can hold a procedure: mount a graph or drop its steps."
            )
    return plans


# ── the pointer ───────────────────────────────────────────────────────────


def rekey_pointer(
    plans: Mapping[str, StepPlan], pointer: StepPointer | None, tenant: str | None
) -> StepPointer | None:
    """Re-key the pointer to the tenure at Evaluate (before triggers run).

    No tenant clears it; the same tenant keeps it; a new tenant starts at
    step 1 when it has steps, else clears it.
    """
    if tenant is None:
        return None
    if pointer is not None and pointer.skill_id == tenant:
        return pointer
    plan = plans.get(tenant)
    return None if plan is None else StepPointer(skill_id=tenant, step=1, total=plan.total)


def current_step(plans: Mapping[str, StepPlan], pointer: StepPointer | None) -> StepSpec | None:
    """The step in progress, or ``None`` (no pointer, unknown skill, or done)."""
    if pointer is None:
        return None
    plan = plans.get(pointer.skill_id)
    return None if plan is None else plan.step(pointer.step)


def _now_on(plan: StepPlan, index: int) -> str:
    nxt = plan.step(index)
    if nxt is None:
        return f"All {plan.total} steps complete."
    return f"Now on step {index} of {plan.total}: {nxt.note}. Its tool: `{nxt.tool}`."


def advance(
    plans: Mapping[str, StepPlan],
    pointer: StepPointer | None,
    *,
    tool_name: str,
    clean: bool,
) -> StepAdvance | None:
    """Advance one step when ``tool_name`` is the current step's tool and ran clean.

    ``clean`` is false for an error, a denial, a gate or a ceiling refusal.
    Call once per result, in batch order, threading the returned pointer.
    """
    step = current_step(plans, pointer)
    if step is None or pointer is None or not clean or tool_name != step.tool:
        return None
    plan = plans[pointer.skill_id]
    moved = StepPointer(
        skill_id=pointer.skill_id, step=step.index + 1, total=plan.total, skipped=pointer.skipped
    )
    suffix = f" Step {step.index} of {plan.total} done. {_now_on(plan, step.index + 1)}"
    return StepAdvance(
        pointer=moved, step=step, total=plan.total,
        completed=moved.step > plan.total, result_suffix=suffix,
    )


def skip_step(
    plans: Mapping[str, StepPlan], pointer: StepPointer | None, reason: object
) -> SkipOutcome:
    """The ``skip_step(reason)`` tool's outcome under the skill's policy."""
    step = current_step(plans, pointer)
    if step is None or pointer is None:
        return SkipOutcome(
            kind="teach", pointer=pointer,
            text="skip_step has nothing to skip: no stepped skill is in progress. "
            "Use the current skill's tools, or finish.",
        )
    plan = plans[pointer.skill_id]
    if not isinstance(reason, str) or not reason.strip():
        return SkipOutcome(
            kind="teach", pointer=pointer,
            text=f"skip_step needs a reason: call it again with reason set to why step "
            f"{step.index} of {plan.total} ('{step.tool}': {step.note}) cannot be done.",
        )
    head = f"Step {step.index} of {plan.total} of skill '{plan.skill_id}' ('{step.tool}')"
    if plan.on_skip == "hold":
        moved = pointer
        text = (f"{head} was not skipped: this skill holds its steps (on_skip='hold'). "
                f"It is still current: {step.note}. Its tool: `{step.tool}`.")
    else:
        moved = StepPointer(
            skill_id=plan.skill_id, step=step.index + 1, total=plan.total,
            skipped=(*pointer.skipped, step.index),
        )
        text = f"{head} skipped: {reason.strip()}. {_now_on(plan, step.index + 1)}"
    return SkipOutcome(
        kind="skipped", text=text, pointer=moved, skill_id=plan.skill_id, step=step,
        total=plan.total, policy=plan.on_skip, reason=reason.strip(),
    )


# ── what the model reads ──────────────────────────────────────────────────


def step_description_prefix(plans: Mapping[str, StepPlan], pointer: StepPointer | None) -> str:
    """``[Step k of n — note] `` for the step in progress, else ``""``."""
    step = current_step(plans, pointer)
    if step is None or pointer is None:
        return ""
    return f"[Step {step.index} of {plans[pointer.skill_id].total} — {step.note}] "


def step_tool_description(
    plans: Mapping[str, StepPlan], pointer: StepPointer | None, tool_name: str, description: str
) -> str:
    """A tool's description as offered: prefixed when it is the current step's tool."""
    step = current_step(plans, pointer)
    if step is None or step.tool != tool_name:
        return description
    return step_description_prefix(plans, pointer) + description


def held_out_tools(
    plans: Mapping[str, StepPlan], pointer: StepPointer | None
) -> frozenset[str]:
    """The tenure's other step tools, held out while a step is in progress.

    The host still offers one when another active source carries it.
    """
    step = current_step(plans, pointer)
    if step is None or pointer is None:
        return frozenset()
    return frozenset(s.tool for s in plans[pointer.skill_id].steps if s.tool != step.tool)


def skip_step_description(plans: Mapping[str, StepPlan], pointer: StepPointer | None) -> str:
    """The ``skip_step`` tool's description: the step, what remains, the policy."""
    step = current_step(plans, pointer)
    if step is None or pointer is None:
        return "Skip the current step of a stepped skill. No step is in progress now."
    plan = plans[pointer.skill_id]
    left = plan.total - step.index + 1
    policy = (
        "skipping moves you on to the next step" if plan.on_skip == "advance"
        else "the step stays current; the skip is only recorded"
    )
    return (
        f"Skip step {step.index} of {plan.total} of skill '{plan.skill_id}' "
        f"({step.note}; tool `{step.tool}`) when it cannot or need not be done. "
        f"{left} of {plan.total} steps remain, this one included. "
        f"Policy '{plan.on_skip}': {policy}. Give a non-empty reason."
    )


def read_skill_suffix(plans: Mapping[str, StepPlan], skill_id: str) -> str:
    """Appended to an accepted ``read_skill`` result of a stepped skill."""
    plan = plans.get(skill_id)
    if plan is None:
        return ""
    first = plan.steps[0]
    return f" You are on step 1 of {plan.total}: {first.note}. Its tool: `{first.tool}`."


def decide_final(
    plans: Mapping[str, StepPlan],
    pointer: StepPointer | None,
    *,
    limit_fired: bool,
    already_nudged: bool,
) -> FinalVerdict | None:
    """A final answer with steps left: ``cut-short`` when a limit fired, else
    ``nudged`` the first time (one teaching user message, loop again) and
    ``accepted`` after that. ``None`` when no step is left."""
    step = current_step(plans, pointer)
    if step is None or pointer is None:
        return None
    plan = plans[pointer.skill_id]
    remaining = plan.steps[step.index - 1:]
    if limit_fired:
        action: Literal["nudged", "accepted", "cut-short"] = "cut-short"
    else:
        action = "accepted" if already_nudged else "nudged"
    listed = ", ".join(f"step {s.index} (`{s.tool}`)" for s in remaining)
    text = (
        f"You are about to finish, but skill '{plan.skill_id}' has {len(remaining)} "
        f"unfinished step(s) of {plan.total}: {listed}. Run them, call skip_step "
        "with a reason, or answer again to finish anyway."
    )
    return FinalVerdict(
        action=action, skill_id=plan.skill_id, remaining=remaining, total=plan.total,
        nudge_text=text if action == "nudged" else None,
    )
