"""Diff two runs on their decisions, never on their timestamps.

Each run is folded into one view per iteration — the cursor move, the
active and skipped injections, the pieces injected per slot (injection id
and content hash), the model that was called, the tool calls with their
status, refusals and escalations — plus the run's configuration and its
answer. Iterations align by number; the report lists what changed, the
first divergence first. Whether the runs are equal is decided on the full
decision stream (``lens.playback._stream``), so nothing the view folds away hides a
difference.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    InjectionDeclared,
    LLMStart,
    RunEnd,
    SkillEscalated,
    SkillRejected,
    StepAdvanced,
    StepSkipped,
    ToolEnd,
    ToolStart,
)
from lens.playback._stream import Divergence, clip, config_changes, decisions_of, divergence

__all__ = ["Change", "RunDiff", "RunView", "diff_runs", "render_diff", "view_of"]

ASPECTS = ("cursor", "active", "skipped", "system-prompt", "messages", "tools-slot", "model",
           "tool calls", "refusals", "steps")
_END = 10**9  # the answer sorts after every iteration


@dataclass(slots=True)
class RunView:
    """A run folded into decisions per iteration."""

    run_id: str
    declared: tuple[str, ...] = ()
    iterations: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    answer: str | None = None


def _cursor(e: ContextEvaluated) -> list[str]:
    m = e.cursor_move
    if m is None:
        return []
    text = f"{m.from_skill or 'start'}→{m.to or '∅'} by {m.by}"
    if m.witness:
        text += f" (witness {m.witness!r})"
    if m.guard is not None:
        conds = " AND ".join(f"{c.key} {c.op} {c.value!r}" for c in m.guard.conditions)
        text += f" (guard {conds}: {'passed' if m.guard.verdict else 'failed'})"
    return [text]


def _tool_text(start: ToolStart | None, end: ToolEnd) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in (start.args if start else {}).items())
    status = end.status or ("error" if end.error else "ok")
    return clip(f"{end.tool_name}({args}) → {status}", 90)


def _fold(e: Event, it: dict[str, list[str]], starts: dict[str, ToolStart]) -> None:
    if isinstance(e, ContextEvaluated):
        it["cursor"] += _cursor(e)
        it["active"] += list(e.active_ids)
        it["skipped"] += [f"{s.id} ({s.reason})" for s in e.skipped]
    elif isinstance(e, ContextInjected):
        slot = "tools-slot" if e.slot == "tools" else str(e.slot)
        it[slot].append(f"{e.injection_id or e.source}#{e.content_hash[:8]}")
    elif isinstance(e, LLMStart):
        via = f" via {e.brain_via}" if e.brain_via else ""
        it["model"].append(f"{e.step_id} {e.provider}/{e.model}{via}")
    elif isinstance(e, ToolStart):
        starts[e.tool_call_id] = e
    elif isinstance(e, ToolEnd):
        it["tool calls"].append(_tool_text(starts.get(e.tool_call_id), e))
    elif isinstance(e, SkillRejected):
        it["refusals"].append(f"read_skill({e.requested_id!r}) refused: {e.reason}")
    elif isinstance(e, SkillEscalated):
        it["refusals"].append(f"escalated to {e.to_provider}/{e.to_model}")
    elif isinstance(e, StepAdvanced | StepSkipped):
        verb = "done" if isinstance(e, StepAdvanced) else "skipped"
        it["steps"].append(f"{e.skill_id} step {e.step.index}/{e.total} {e.step.tool} {verb}")


def view_of(events: Sequence[Event]) -> RunView:
    """Fold a run's events into its per-iteration decision view."""
    view = RunView(run_id=events[0].run_id if events else "")
    iterations: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    starts: dict[str, ToolStart] = {}
    declared: list[str] = []
    for e in events:
        if isinstance(e, InjectionDeclared):
            declared.append(f"{e.flavor} {e.injection_id}#{e.content_hash[:8]}")
        elif isinstance(e, RunEnd):
            view.answer = e.final_content
        elif e.iteration > 0:
            _fold(e, iterations[e.iteration], starts)
    view.declared = tuple(declared)
    view.iterations = {i: dict(v) for i, v in sorted(iterations.items())}
    return view


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One aspect of one iteration (0 = the run) that differs: what only A had, only B had."""

    iteration: int
    aspect: str
    removed: tuple[str, ...]
    added: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDiff:
    """Two runs compared on their decisions."""

    a: str
    b: str
    equal: bool
    changes: tuple[Change, ...]
    first: Divergence | None
    config: tuple[str, ...]

    def __str__(self) -> str:
        return "\n".join(render_diff(self))


def _change(iteration: int, aspect: str, xs: Sequence[str], ys: Sequence[str]) -> Change | None:
    if list(xs) == list(ys):
        return None
    cx, cy = Counter(xs), Counter(ys)
    removed = tuple((cx - cy).elements())
    added = tuple((cy - cx).elements())
    if not removed and not added:  # the same items in another order
        removed, added = (f"order: {', '.join(xs)}",), (f"order: {', '.join(ys)}",)
    return Change(iteration=iteration, aspect=aspect, removed=removed, added=added)


def _changes(va: RunView, vb: RunView) -> list[Change]:
    found = [_change(0, "configuration", va.declared, vb.declared)]
    for i in sorted(set(va.iterations) | set(vb.iterations)):
        xa, xb = va.iterations.get(i), vb.iterations.get(i)
        if xa is None or xb is None:
            only = "A" if xb is None else "B"
            found.append(Change(iteration=i, aspect="iteration",
                                removed=(f"only in {only}",) if only == "A" else (),
                                added=(f"only in {only}",) if only == "B" else ()))
        for aspect in ASPECTS:
            found.append(_change(i, aspect, (xa or {}).get(aspect, []),
                                 (xb or {}).get(aspect, [])))
    found.append(_change(_END, "answer", [va.answer or "(none)"], [vb.answer or "(none)"]))
    return [c for c in found if c is not None]


def diff_runs(a: Sequence[Event], b: Sequence[Event]) -> RunDiff:
    """Compare two runs: the folded view's changes and the stream's first divergence."""
    declared_a, decided_a = decisions_of(a)
    declared_b, decided_b = decisions_of(b)
    first = divergence(decided_a, decided_b, sides=("A", "B"))
    config = config_changes(declared_a, declared_b)
    va, vb = view_of(a), view_of(b)
    return RunDiff(a=va.run_id, b=vb.run_id, equal=first is None and not config,
                   changes=tuple(_changes(va, vb)), first=first, config=config)


def _span(iterations: list[int]) -> str:
    """``run``, ``answer``, ``it 4``, ``it 1–6`` or ``it 1, 3``."""
    if iterations[0] == 0:
        return "run"
    if iterations[0] == _END:
        return "answer"
    if iterations == list(range(iterations[0], iterations[-1] + 1)) and len(iterations) > 1:
        return f"it {iterations[0]}–{iterations[-1]}"
    return "it " + ", ".join(map(str, iterations))


def _grouped(changes: Sequence[Change]) -> list[tuple[str, Change]]:
    """Changes equal but for their iteration, folded into one line each."""
    groups: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[Change]] = {}
    for c in changes:
        groups.setdefault((c.aspect, c.removed, c.added), []).append(c)
    return [(_span([c.iteration for c in cs]), cs[0]) for cs in groups.values()]


def render_diff(d: RunDiff) -> list[str]:
    """A compact unified view: ``-`` only in A, ``+`` only in B, first divergence first."""
    head = f"diff A {d.a} · B {d.b}: "
    if d.equal:
        return [head + "the same decisions (timestamps, ids and durations ignored)"]
    n = len(_grouped(d.changes))
    lines = [head + (f"{n} changes (- only in A, + only in B)" if n else
                     "they differ outside the per-iteration view (see the first divergence)")]
    if d.first is not None:
        f = d.first
        lines += [f"first divergence: seq {f.expected_seq} (A) / {f.got_seq} (B) · {f.step} · "
                  f"iteration {f.iteration}", f"  A: {f.expected}", f"  B: {f.got}"]
        lines += [f"  {x}" for x in f.fields]
    lines.append("changes:")
    for where, c in _grouped(d.changes):
        lines += [f"  {where:<9} {c.aspect:<14} - {x}" for x in c.removed]
        lines += [f"  {where:<9} {c.aspect:<14} + {x}" for x in c.added]
    return lines
