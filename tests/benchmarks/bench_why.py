"""Why figures: the correlational tier on long runs, and the causal tier on the planted bugs.

``why_10k_events_ms`` (target < 200): median milliseconds of
``footprint why RUN --json`` without an agent (correlational), run in process
exactly as the CLI runs it (open the store, resolve the run, walk, render) and
with the collector settings the ``footprint`` process gives itself
(``lens.cli._main._tune_process``: the heap frozen, fewer passes; restored after),
so the figure does not depend on how big the benchmark's own heap has grown; on
a generated ~10k-event run in a store: an agent with 18 always-on pieces
(steering and facts) that makes ~320 tool calls before answering, so its
answer's causal past spans every iteration. ``why_events_read_pct`` (target
<= 10): ``events_read / events_total`` of that report, in percent;
``why_10k_events_total`` is the run's size. The same two figures for a second
shape, ``why_10k_library_ms`` and ``why_10k_library_read_pct``: an agent with a
knowledge base of ~9,660 rule-gated facts (each declared, few ever land) and
20 tool calls. ``why_reruns_per_culprit``: the median number of re-runs
``lens.why(..., agent=make_agent())`` makes on the planted examples that have a
culprit; ``why_planted_confirmed`` counts those whose culprit came out
confirmed. ``why_false_cause_per_100`` (target <= 0.5, i.e. at most 1 in 200):
innocent pieces confirmed per 100 ``why`` runs on a model that flips its answer
at random — 100 runs at p = 0.5 and 100 at p = 0.1 (20 + 20 in quick mode);
every piece of that agent is innocent. ``why_planted_root_first`` (goal 1.0):
the share of all planted examples whose report's first line names the root
cause(s) (every member of a conjunction or a redundant set) and no innocent
piece — for the sampling model, that nothing is confirmed;
``why_duplicate_stamps`` (goal 0): verdicts stamped on more than one suspect
for one removal, summed over those reports. The planted calls pass the
example's factory, as the CLI's ``--agent`` does. ``why_facts_locale_cases``: the
six-locale fact table's phrasings that read right (see :func:`locale_figures`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from footprint import (
    Agent,
    FunctionModel,
    InjectionContext,
    ListSink,
    StepClock,
    define_fact,
    define_steering,
)
from footprint.providers import LLMRequest, Reply, call
from recorder import ParquetSink, Recorder
from recorder.store._owned import tune_collector

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from planted_support import NAMES, ROOTS, load  # noqa: E402

LIBRARY = 9_660
LOOP = 320
WITH_CULPRIT = ("wrong_fact", "wrong_rag_chunk", "steering_over_fact", "skill_wrong_tool",
                "lease_instruction", "early_instruction", "twin_tools", "stale_history",
                "redundant_pair", "crash")


# ── the long runs (correlational tier) ──────────────────────────────────────


def page(n: int) -> str:
    """One page of the customer's order history."""
    return json.dumps({"page": n, "orders": [f"A-{n}{i}" for i in range(3)]})


def _pager(pages: int) -> Callable[[LLMRequest], Reply]:
    def model(request: LLMRequest) -> Reply:
        done = sum(1 for m in request.messages if m.role == "tool")
        if done < pages:
            return call("page", n=done)
        return f"Read {done} pages of orders: none is overdue, so no refund is due."

    return model


def _topic(word: str) -> Callable[[InjectionContext], bool]:
    return lambda ctx: word in ctx.user_message


def _loop_agent(sink: Recorder) -> Agent:
    pieces = [define_steering(f"rule-{i}", f"House rule {i}: be precise about orders.")
              for i in range(9)]
    pieces += [define_fact(f"fact-{i}", f"Shop fact {i}: orders older than {30 + i} days are "
                           "archived.") for i in range(9)]
    return Agent(provider=FunctionModel(_pager(LOOP), name="bench-loop"), model="bench",
                 system_prompt="You are the order desk.", injections=pieces, tools=[page],
                 sink=sink, clock=StepClock(), max_iterations=LOOP + 2)


def _library_agent(sink: Recorder) -> Agent:
    library = [define_fact(f"kb-{i}", f"Knowledge base entry {i}: item {i} ships in {i % 9 + 1} "
                           "days.", active_when=_topic(f"item-{i}")) for i in range(LIBRARY)]
    return Agent(provider=FunctionModel(_pager(20), name="bench-library"), model="bench",
                 system_prompt="You are the order desk.",
                 injections=[define_steering("voice", "Be brief."),
                             define_fact("refund-rule", "Refund overdue orders only."),
                             *library],
                 tools=[page], sink=sink, clock=StepClock(), max_iterations=22)


def _record(store: Path, build: Callable[[Recorder], Agent]) -> str:
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        run_id = build(recorder).run_sync("Is any of my orders overdue for item-7?").run_id
    finally:
        recorder.close()
    return run_id


def _cli_json(store: Path, run_id: str) -> dict[str, Any]:
    from lens.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["why", run_id, "--store", str(store), "--json"])
    if code != 0:
        raise RuntimeError(f"footprint why exited {code}")
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


@contextlib.contextmanager
def _as_cli_process() -> Iterator[None]:
    """The garbage collector as the ``footprint`` executable sets it, then as it was."""
    thresholds = gc.get_threshold()
    gc.collect()
    tune_collector()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _timed(build: Callable[[Recorder], Agent], repeats: int) -> tuple[float, int, float]:
    """Median ms of the CLI call, the run's size and the share of it read (%)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        run_id = _record(store, build)
        report = _cli_json(store, run_id)  # warm: imports, the store's first open
        times = []
        with _as_cli_process():
            for _ in range(repeats):
                t0 = time.perf_counter()
                _cli_json(store, run_id)
                times.append((time.perf_counter() - t0) * 1e3)
    total = int(report["events_total"])
    read = 100.0 * int(report["events_read"]) / total
    return round(statistics.median(times), 1), total, round(read, 2)


def long_run_figures(repeats: int) -> dict[str, float]:
    loop_ms, loop_total, loop_pct = _timed(_loop_agent, repeats)
    lib_ms, lib_total, lib_pct = _timed(_library_agent, repeats)
    return {
        "why_10k_events_ms": loop_ms,
        "why_10k_events_total": float(loop_total),
        "why_events_read_pct": loop_pct,
        "why_10k_library_ms": lib_ms,
        "why_10k_library_total": float(lib_total),
        "why_10k_library_read_pct": lib_pct,
    }


# ── the causal tier through the public API ─────────────────────────────────


def _api() -> Callable[..., Any]:
    import lens

    fn = getattr(lens, "why", None)
    if fn is None:
        raise RuntimeError("lens.why(store_or_events, run, *, agent=None, ...) -> WhyReport "
                           "is not there yet")
    return fn  # type: ignore[no-any-return]


def _as_dict(report: Any) -> Mapping[str, Any]:
    if dataclasses.is_dataclass(report) and not isinstance(report, type):
        return dataclasses.asdict(report)
    if isinstance(report, Mapping):
        return report
    raise TypeError(f"lens.why returned {type(report).__name__}, not a report")


def reruns(report: Mapping[str, Any]) -> int:
    """Re-runs the report made: its own count, else baseline plus every suspect's runs."""
    for key in ("reruns", "re_runs", "runs"):
        if isinstance(report.get(key), int):
            return int(report[key])
    base = report.get("baseline") or {}
    made = len(base.get("outcomes", ())) if isinstance(base, Mapping) else 0
    return made + sum(int(s.get("runs") or 0) for s in report["suspects"])


def _explain(name: str, why: Callable[..., Any]) -> Mapping[str, Any]:
    """The plain call on the example: the agent given as its factory (as ``--agent`` is)."""
    module = load(name)
    sink = ListSink()
    run_id = module.converse(module.make_agent(sink=sink)).run_id
    return _as_dict(why(sink.events, run_id, agent=module.make_agent))


def root_first(name: str, report: Mapping[str, Any]) -> bool:
    """Whether the report's first line names the example's root cause(s) and no innocent
    (for the sampling model, which has none: that it confirms nothing)."""
    first = f"{str(report['conclusion']).upper()}: {report['conclusion_text']}"
    roots = ROOTS[name]
    if not roots:
        return report["conclusion"] != "confirmed"
    innocent = any(re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", first)
                   for i in load(name).INNOCENT)
    return all(r in first for r in roots) and not innocent


def duplicate_stamps(report: Mapping[str, Any]) -> int:
    """Verdicts stamped more than once for one removal (one experiment, one suspect)."""
    stamped = [s["removal"] for s in report["suspects"] if s.get("verdict")]
    return len(stamped) - len(set(stamped))


def _confirms(name: str, report: Mapping[str, Any]) -> bool:
    """Whether the example's culprit (a stale message, an id or an id set) came out confirmed."""
    module = load(name)
    for s in report["suspects"]:
        if s.get("verdict") != "confirmed":
            continue
        if name == "stale_history":
            if s.get("kind") == "message" and module.CULPRIT_TEXT in str(s.get("excerpt")):
                return True
            continue
        want = set(module.CULPRIT) if isinstance(module.CULPRIT, tuple) else {module.CULPRIT}
        if (set(s.get("ids") or ()) or {s.get("id")}) == want:
            return True
    return False


def planted_figures() -> dict[str, float]:
    why = _api()
    counts, confirmed, first, stamps = [], 0, 0, 0
    for name in NAMES:
        report = _explain(name, why)
        first += root_first(name, report)
        stamps += duplicate_stamps(report)
        if name in WITH_CULPRIT:
            counts.append(reruns(report))
            confirmed += _confirms(name, report)
    return {"why_reruns_per_culprit": float(statistics.median(counts)),
            "why_planted_confirmed": float(confirmed),
            "why_planted_with_culprit": float(len(WITH_CULPRIT)),
            "why_planted_root_first": round(first / len(NAMES), 3),
            "why_duplicate_stamps": float(stamps)}


def false_cause_figures(runs_each: int) -> dict[str, float]:
    why, sampling = _api(), load("sampling")
    false_causes = 0
    for p in (0.5, 0.1):
        for i in range(runs_each):
            sink = ListSink()
            run_id = sampling.converse(sampling.make_agent(sink=sink, seed=i, p=p)).run_id
            agent = sampling.make_agent(seed=10_000 + i, p=p)
            report = _as_dict(why(sink.events, run_id, agent=agent))
            false_causes += sum(s.get("verdict") == "confirmed" for s in report["suspects"])
    return {"why_false_cause_per_100": round(100.0 * false_causes / (2 * runs_each), 2),
            "why_false_cause_runs": float(2 * runs_each)}


def locale_figures() -> dict[str, float]:
    """``why_facts_locale_cases``: the phrasings of the six-locale fact table
    (tests/unit/test_why_facts_locales.py) that read as their normal forms;
    ``why_facts_locale_failing`` those that do not (goal 0)."""
    sys.path.insert(0, str(TESTS / "unit"))
    from test_why_facts_locales import CASES

    from lens.explain._facts import facts

    ok = sum(tuple((f.kind, f.value) for f in facts(text) if f.kind != "entity") == want
             for _, text, want in CASES)
    return {"why_facts_locale_cases": float(ok),
            "why_facts_locale_failing": float(len(CASES) - ok)}


def figures(quick: bool) -> dict[str, float]:
    out = locale_figures()
    out.update(long_run_figures(repeats=3 if quick else 9))
    out.update(planted_figures())
    out.update(false_cause_figures(20 if quick else 100))
    return out


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
