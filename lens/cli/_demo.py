"""``footprint demo``: run the bundled support-desk agent offline into the store.

It records the run with the real recorder and Parquet store, reads it back
from the store, and prints the answer, a compact decision timeline and the
next commands to try.
"""

from __future__ import annotations

import argparse
import shutil
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from footprint._errors import ConfigError
from footprint.events import (
    ContextEvaluated,
    ContextInjected,
    Event,
    LLMStart,
    SkillEscalated,
    SkillRejected,
    StepAdvanced,
    ToolStart,
)
from lens.cli._common import clip

if TYPE_CHECKING:
    from recorder import Store

__all__ = ["compact_timeline", "run", "why_lines"]

DESK = "lens._examples.support_desk:make_agent"
EXPECTED = "DECLINED"



def _check_store_dir(path: Path) -> None:
    """A store must be a directory, or creatable as one below a directory."""
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                what = "is" if part == path else f"(above {str(path)!r}) is"
                raise ConfigError(f"--store {str(part)!r} {what} a file, not a directory; "
                                  "pass a store directory (it is created if missing)")
            return


def _clean(path: Path) -> None:
    from recorder.write._layout import STORE_DIRS

    if not path.exists():
        return
    entries = {p.name for p in path.iterdir()}
    foreign = entries - set(STORE_DIRS)
    if foreign:
        extra = ", ".join(sorted(foreign))
        raise ConfigError(
            f"--clean refuses to delete {str(path)!r}: it holds files that are not a "
            f"footprint store ({extra}); pass --store with a store directory"
        )
    shutil.rmtree(path)


def _move_text(e: ContextEvaluated) -> str | None:
    m = e.cursor_move
    if m is None or (m.by == "stay" and m.guard is None and not m.guards_closed):
        return None
    text = f"cursor {m.from_skill or 'start'} → {m.to or '∅'} by {m.by}"
    if m.witness:
        text += f" (witness {m.witness!r})"
    if m.guard is not None:
        conds = " AND ".join(f"{c.key} {c.op} {c.value!r}" for c in m.guard.conditions)
        text += f" (guard {conds}: {'passed' if m.guard.verdict else 'failed'})"
    return text


def _line(e: Event) -> str | None:
    if isinstance(e, ContextEvaluated):
        return _move_text(e)
    if isinstance(e, SkillRejected):
        return f"refused read_skill({e.requested_id!r}): {e.reason}"
    if isinstance(e, SkillEscalated):
        return (f"escalated after {e.refusals} refusals → "
                f"{e.to_provider}/{e.to_model or '(same model)'}")
    if isinstance(e, StepAdvanced):
        done = " (all steps done)" if e.completed else ""
        return f"step {e.step.index}/{e.total} of {e.skill_id} done: {e.step.tool}{done}"
    if isinstance(e, ToolStart):
        args = ", ".join(f"{k}={v!r}" for k, v in e.args.items())
        return f"called {e.tool_name}({clip(args, 60)})"
    if isinstance(e, LLMStart) and e.brain_via is not None:
        return f"model {e.model} chosen by {e.brain_via}" + (
            f" brain of {e.brain_skill_id!r}" if e.brain_skill_id else "")
    return None


def compact_timeline(events: Iterable[Event]) -> list[str]:
    """One block per iteration: decisions, then the injections that landed."""
    decisions: dict[int, list[str]] = defaultdict(list)
    injected: dict[int, list[str]] = defaultdict(list)
    for e in events:
        if isinstance(e, ContextInjected) and e.slot == "system-prompt":
            injected[e.iteration].append(e.injection_id or e.source)
            continue
        text = _line(e)
        if text is not None:
            decisions[e.iteration].append(text)
    lines: list[str] = []
    before: list[str] = []
    for i in sorted(set(decisions) | set(injected)):
        if i <= 0:
            continue
        lines.append(f"  iteration {i}")
        lines += [f"    · {t}" for t in decisions.get(i, [])]
        lines.append(f"    · system prompt: {_delta(before, injected.get(i, []))}")
        before = injected.get(i, [])
    return lines


def _delta(before: list[str], now: list[str]) -> str:
    """The whole list the first time, then only what changed."""
    if not before:
        return ", ".join(now) or "(empty)"
    added = [f"+{x}" for x in now if x not in before]
    gone = [f"-{x}" for x in before if x not in now]
    return " ".join(added + gone) or "unchanged"


def _short(verdict: str | None, flips: int, runs: int) -> str:
    if verdict is None:
        return "evidence"
    if verdict == "confirmed":
        return f"CAUSAL {flips}/{runs}"
    return f"{verdict} {flips}/{runs}" if runs else verdict


def why_lines(store: Store, run_id: str, top: int = 5) -> list[str]:
    """The why report in brief: conclusion, baseline, and the top suspects with verdicts."""
    from lens._examples.support_desk import make_agent
    from lens.explain._why import why

    r = why(store, run_id, agent=make_agent(), expect=EXPECTED)
    lines = [f"  compared by: the answer {r.comparator} (what a correct desk answers)",
             f"  {r.conclusion.upper()}: {r.conclusion_text}"]
    if r.baseline is not None:
        lines.append(f"  baseline: the unchanged agent gave the recorded answer in "
                     f"{r.baseline.same}/{r.baseline.runs} live re-runs")
    lines.append(f"  {r.reruns} re-runs · {r.model_calls.made} model calls made, "
                 f"{r.model_calls.saved} served from the recording · "
                 f"{r.events_read} of {r.events_total} events read")
    for s in r.suspects[:top]:
        score = "  -- " if s.score is None else f"{s.score:.2f}"
        lines.append(f"    {s.rank}. [{s.kind}] {clip(s.label, 44):<44} {score}  "
                     f"{_short(s.verdict, s.flips, s.runs - s.broke)}")
    lines.append(f"  (`footprint why {run_id[:13]} --agent {DESK} --expect {EXPECTED}` "
                 "shows every chain)")
    return lines


def _next_steps(run_id: str, store: str | None) -> list[str]:
    flag = f" --store {store}" if store else ""
    short = run_id[:13]
    return [
        f"  footprint runs{flag}",
        f"  footprint show {short}{flag}",
        f"  footprint sql \"SELECT iteration, injection_id, admitted_via, admitted_by "
        f"FROM injections WHERE run_id LIKE '{short}%' AND slot = 'system-prompt'\"{flag}",
        f"  footprint verify {short}{flag}",
    ]


def _record(store_path: str | None) -> tuple[str, str]:
    from footprint.agent import SystemClock
    from lens._examples.support_desk import DEFAULT_MESSAGE, make_agent
    from recorder import ParquetSink, Recorder, default_store_path

    recorder = Recorder(sinks=[ParquetSink(store_path or default_store_path())])
    try:
        # wall-clock times; the ids' random bits come from the OS, so runs never merge
        result = make_agent(sink=recorder, clock=SystemClock()).run_sync(DEFAULT_MESSAGE)
    finally:
        recorder.close()
    return result.run_id, DEFAULT_MESSAGE


def run(args: argparse.Namespace) -> int:
    from lens.cli._common import open_from
    from recorder import default_store_path

    path = Path(args.store or default_store_path())
    _check_store_dir(path)
    if args.clean:
        _clean(path)
    run_id, message = _record(str(path))
    store = open_from(args)
    events = list(store.events(run_id))
    answer = store.rows("SELECT answer, status FROM runs WHERE run_id = ?", [run_id])[0]
    print(f"footprint demo · support desk · run {run_id} · store {path}")
    print(f"\nuser:   {clip(message, 100)}")
    print(f"answer: {answer[0]}   [{answer[1]}, {len(events)} events recorded]\n")
    print("decisions:")
    for line in compact_timeline(events):
        print(line)
    print("\nwhy (every candidate upstream of the answer, tested by counterfactual re-runs; "
          "only these may say 'caused'):")
    for line in why_lines(store, run_id):
        print(line)
    print("\nnext:")
    for line in _next_steps(run_id, args.store):
        print(line)
    return 0
