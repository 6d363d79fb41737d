"""The conformance kit: drive a foreign host through scripted iterations and
report, per obligation of the host contract, ``passed`` or the violation.

The kit builds its own small graph and calls ``make_host(graph)`` once per
obligation. The adapter it gets back (:class:`KitHost`) runs one iteration
per ``iterate`` call, in the contract's order:

1. build the iteration's ctx once (the carried cursor, the previous batch's
   ``tool_results``, the pick published last iteration), advance the cursor
   with it and evaluate the graph's compiled skills with that same ctx;
2. dispatch: clear the published pick, then gate each ``read_skill`` pick
   in ``picks`` against the advanced cursor and publish the accepted hops.

It reports what it did as a :class:`KitIteration`. Event names may be the
catalog names (``skill.rejected``) or bare (``rejected``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from footprint.graph._builder import skill_graph
from footprint.graph._declare import SkillGraph
from footprint.injection._define_skill import define_skill
from footprint.injection._types import Injection, ToolResult

__all__ = [
    "OBLIGATIONS",
    "HostReport",
    "KitEvent",
    "KitHost",
    "KitIteration",
    "ObligationResult",
    "check_host",
    "kit_graph",
]

OBLIGATIONS: tuple[str, ...] = (
    "one cursor advance per iteration, from the same ctx",
    "reachability enforced at pick time",
    "publish only accepted picks, cleared every iteration",
    "carry the cursor",
    "emit what happened",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class KitEvent:
    """One skill event the host emitted."""

    name: str
    payload: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class KitIteration:
    """What one host iteration did, as the kit reads it back.

    ``cursor`` is the cursor advanced this iteration; ``active_skill_ids``
    the skills its trigger evaluation admitted; ``accepted`` one flag per
    pick, in order; ``pending_pick`` the pick published for the next
    iteration; ``events`` the skill events emitted during this iteration.
    """

    cursor: str | None
    active_skill_ids: tuple[str, ...]
    accepted: tuple[bool, ...] = ()
    pending_pick: str | None = None
    events: tuple[KitEvent, ...] = ()


class KitHost(Protocol):
    """The small adapter a foreign host implements to be checked."""

    def start_run(self, user_message: str) -> None: ...

    def iterate(
        self, *, tool_results: Sequence[ToolResult] = (), picks: Sequence[str] = ()
    ) -> KitIteration: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ObligationResult:
    """One obligation's verdict: ``violation`` says exactly what went wrong."""

    number: int
    title: str
    passed: bool
    violation: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HostReport:
    """The kit's verdict over all five obligations."""

    results: tuple[ObligationResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def failed(self) -> tuple[int, ...]:
        """The numbers of the obligations that failed."""
        return tuple(r.number for r in self.results if not r.passed)

    def summary(self) -> str:
        return "\n".join(
            f"{r.number}. {r.title}: " + ("passed" if r.passed else f"FAILED — {r.violation}")
            for r in self.results
        )


# ── the kit's own graph ───────────────────────────────────────────────────

ROUTED = ("billing", "refund", "audit")


def _skill(skill_id: str, text: str) -> Injection:
    return define_skill(skill_id, f"{text}.", f"You handle {text.lower()}.")


def kit_graph() -> SkillGraph:
    """triage (entry) -> billing on ``lookup_invoice``; triage -.-> refund (bare);
    billing -> refund on ``issue_refund``, billing -> audit on ``flag_account``;
    ``faq`` is open (no edge leads to it)."""
    return (
        skill_graph(
            _skill("triage", "Sorting the request"), _skill("billing", "Billing questions"),
            _skill("refund", "Refunds"), _skill("audit", "Account audits"),
            _skill("faq", "Common questions"),
        )
        .entry("triage", when=lambda _ctx: True)
        .route("triage", "billing", on_tool_return="lookup_invoice")
        .route("triage", "refund")
        .route("billing", "refund", on_tool_return="issue_refund")
        .route("billing", "audit", on_tool_return="flag_account")
        .build(check="off")
    )


def _result(tool: str, call_id: str) -> ToolResult:
    return ToolResult(tool_name=tool, result="{}", tool_call_id=call_id)


class Violation(Exception):
    """Raised inside a script to report the obligation's violation."""


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise Violation(message)


# ── one script per obligation ─────────────────────────────────────────────


def _same_ctx(host: KitHost) -> None:
    host.start_run("I have a question about my invoice")
    steps = [host.iterate(), host.iterate(tool_results=[_result("lookup_invoice", "c1")])]
    steps.append(host.iterate(tool_results=[_result("issue_refund", "c2")]))
    for n, it in enumerate(steps, start=1):
        routed = sorted(s for s in it.active_skill_ids if s in ROUTED)
        expected = [it.cursor] if it.cursor in ROUTED else []
        _expect(
            routed == expected,
            f"iteration {n}: the cursor advanced to {it.cursor!r} but the triggers "
            f"admitted the routed skills {routed} — the triggers saw a different ctx than "
            "the cursor (build the ctx once and use it for both)",
        )


def _gate(host: KitHost) -> None:
    host.start_run("help")
    host.iterate()
    it = host.iterate(picks=["audit"])
    _expect(
        it.accepted[:1] == (False,),
        f"read_skill('audit') from cursor {it.cursor!r} was accepted, but 'audit' is not "
        "reachable from there (reachable: billing, refund; open: faq) — check each pick "
        "against reachable_skills(cursor) + open_skills() before it counts",
    )
    host.start_run("help")
    host.iterate()
    it = host.iterate(picks=["refund", "faq"])
    _expect(
        it.accepted[:2] == (True, True),
        f"read_skill('refund') and read_skill('faq') from {it.cursor!r} gave "
        f"accepted={list(it.accepted)}; a reachable hop and an open skill must be accepted",
    )


def _publish(host: KitHost) -> None:
    host.start_run("help")
    host.iterate()
    it = host.iterate(picks=["audit"])
    _expect(it.pending_pick is None,
            f"the refused pick 'audit' was published as pending_skill_pick "
            f"({it.pending_pick!r}); publish only accepted hops")
    it = host.iterate(picks=["refund"])
    _expect(it.pending_pick == "refund",
            f"the accepted hop 'refund' was not published (pending_skill_pick is "
            f"{it.pending_pick!r}); set it after the gate accepts a hop")
    it = host.iterate()
    _expect(it.pending_pick is None,
            f"an iteration with no picks left pending_skill_pick={it.pending_pick!r}; "
            "clear it at the top of every iteration")


def _carry(host: KitHost) -> None:
    host.start_run("invoice")
    script: list[tuple[Sequence[ToolResult], str]] = [
        ((), "triage"), ((_result("lookup_invoice", "c1"),), "billing"), ((), "billing"),
    ]
    for n, (results, expected) in enumerate(script, start=1):
        it = host.iterate(tool_results=results)
        _expect(it.cursor == expected,
                f"iteration {n}: cursor {it.cursor!r}, expected {expected!r} — the advanced "
                "cursor must become the next iteration's current_skill_id")


def _names(it: KitIteration) -> set[str]:
    return {e.name.rsplit(".", 1)[-1] for e in it.events}


def _missing_events(n: int, it: KitIteration, before: tuple[str, ...],
                    picks: Sequence[str], conflict: bool) -> list[str]:
    """What this iteration did by the host's own account, and was not emitted."""
    names = _names(it)
    missing = [f"iteration {n}: no 'activated' event when {s!r} became active"
               for s in it.active_skill_ids if s not in before and "activated" not in names]
    missing += [f"iteration {n}: no 'deactivated' event when {s!r} stopped being active"
                for s in before if s not in it.active_skill_ids and "deactivated" not in names]
    missing += [f"iteration {n}: no 'rejected' event for the refused read_skill({p!r})"
                for p, ok in zip(picks, it.accepted, strict=False)
                if not ok and "rejected" not in names]
    if conflict and "route_conflict" not in names:
        missing.append(f"iteration {n}: no 'route_conflict' event although flag_account -> "
                       "audit and issue_refund -> refund disagreed")
    return missing


def _emit(host: KitHost) -> None:
    host.start_run("invoice")
    batch = (_result("flag_account", "c2"), _result("issue_refund", "c3"))
    script: list[tuple[Sequence[ToolResult], Sequence[str]]] = [
        ((), ()), ((), ("audit",)), ((_result("lookup_invoice", "c1"),), ()), (batch, ()),
    ]
    missing: list[str] = []
    active: tuple[str, ...] = ()
    cursor: str | None = None
    for n, (results, picks) in enumerate(script, start=1):
        it = host.iterate(tool_results=results, picks=picks)
        conflict = cursor == "billing" and results == batch
        missing += _missing_events(n, it, active, picks, conflict)
        active, cursor = it.active_skill_ids, it.cursor
    _expect(not missing, "; ".join(missing))


_SCRIPTS: tuple[Callable[[KitHost], None], ...] = (_same_ctx, _gate, _publish, _carry, _emit)


def _run(number: int, script: Callable[[KitHost], None],
         make_host: Callable[[SkillGraph], KitHost]) -> ObligationResult:
    title = OBLIGATIONS[number - 1]
    try:
        script(make_host(kit_graph()))
    except Violation as v:
        return ObligationResult(number=number, title=title, passed=False, violation=str(v))
    except Exception as exc:  # a crashing host fails the obligation, never the kit
        return ObligationResult(number=number, title=title, passed=False,
                                violation=f"the host raised {type(exc).__name__}: {exc}")
    return ObligationResult(number=number, title=title, passed=True)


def check_host(make_host: Callable[[SkillGraph], KitHost]) -> HostReport:
    """Run the five obligation scripts, each on a fresh host over the kit's graph."""
    return HostReport(results=tuple(
        _run(n, script, make_host) for n, script in enumerate(_SCRIPTS, start=1)
    ))
