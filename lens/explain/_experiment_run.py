"""``experiment run``: every item of a dataset tried with a candidate agent, then scored.

Each item (``repeat`` times) is one ordinary run recorded into the store, tagged
``experiment:<name>`` and ``item:<item id>`` (its metadata names the experiment,
dataset, version, item and repeat); a later-turn item continues a conversation
made of its recorded history. Runs go ``concurrency`` at a time, each worker on
its own variant of the agent. An answer is scored with ``why``'s comparators
(:func:`lens.explain._outcome.make_comparator`): ``--expect``/the item's expected
answer (passed: the answer holds it), ``--judge`` (passed: a judge label such as
``pass``/``fail``; another label passes nothing) or ``--label``/the whole answer
(a verdict, no pass).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError
from lens.explain._outcome import Comparator, make_comparator
from lens.playback._agent_ref import build_agent, load_target
from recorder import ParquetSink, Recorder, Store
from recorder._datasets import Dataset, DatasetItem
from recorder._experiments import Experiment, ExperimentMeta, ExperimentResult, save_experiment

__all__ = ["Scoring", "checkpoint_of", "run_experiment", "score_answer", "scoring_from"]

_PASS = frozenset({"pass", "passed", "ok", "good", "correct", "expected", "true", "yes", "1"})
_FAIL = frozenset({"fail", "failed", "bad", "wrong", "unexpected", "false", "no", "0"})
FAILED = "(the run failed)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Scoring:
    """How answers are scored: at most one of ``expect``, ``judge`` and ``label``."""

    expect: str | None = None
    judge: Callable[[str], object] | None = None
    judge_name: str = "the judge"
    label: bool = False

    def __post_init__(self) -> None:
        make_comparator(expect=self.expect, judge=self.judge, label=self.label)  # validates

    def comparator(self, item: DatasetItem | None = None) -> Comparator:
        """The comparator of ``item``: the options', else its expected answer, else the
        whole answer."""
        given = self.expect is not None or self.judge is not None or self.label
        expect = self.expect if given or item is None else item.expected
        return make_comparator(expect=expect, judge=self.judge, judge_name=self.judge_name,
                               label=self.label)

    def spec(self) -> str:
        """How the experiment stores this scoring (:func:`scoring_from` reads it back)."""
        if self.expect is not None:
            return f"expect:{self.expect}"
        if self.judge is not None:
            return f"judge:{self.judge_name}"
        return "label" if self.label else "item"

    def describe(self) -> str:
        if self.expect is None and self.judge is None and not self.label:
            return "each item's expected answer, else the whole answer"
        return self.comparator().describe


def scoring_from(spec: str) -> Scoring:
    """The :class:`Scoring` a stored spec names (a judge is imported by its MODULE:FUNC)."""
    kind, _, rest = spec.partition(":")
    if kind == "expect":
        return Scoring(expect=rest)
    if kind == "judge":
        fn = load_target(rest, flag="--judge", kind="a function answer -> label")
        if not callable(fn):
            raise ConfigError(f"--judge {rest!r} names {type(fn).__name__}, not a function; "
                              "name a function answer -> label")
        return Scoring(judge=fn, judge_name=rest)
    return Scoring(label=kind == "label")


def score_answer(scoring: Scoring, item: DatasetItem,
                 answer: str | None) -> tuple[str, bool | None]:
    """``(verdict, passed)`` of one answer (``None`` answer: the run failed)."""
    if answer is None:
        return FAILED, False
    comparator = scoring.comparator(item)
    verdict = comparator.key(answer)
    if comparator.mode == "expect":
        return verdict, verdict == "expected"
    if comparator.mode == "judge":
        low = verdict.strip().lower()
        return verdict, True if low in _PASS else False if low in _FAIL else None
    return verdict, None


def checkpoint_of(item: DatasetItem, conversation_id: str) -> Mapping[str, Any] | None:
    """The conversation an item's message continues (``None``: a first turn)."""
    if not item.history:
        return None
    from footprint.agent._checkpoint import FORMAT

    return {"format": FORMAT, "conversation_id": conversation_id,
            "turns": sum(1 for m in item.history if m["role"] == "user"), "cursor": None,
            "history": [dict(m) for m in item.history]}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tried:
    item: DatasetItem
    repeat: int
    run_id: str | None
    answer: str | None
    latency_ms: float
    error: str | None


def _try(agent: Any, item: DatasetItem, repeat: int, meta: ExperimentMeta) -> _Tried:
    began = time.perf_counter()
    try:
        result = agent.run_sync(
            item.message,
            continue_from=checkpoint_of(item, f"{meta.name}/{item.item_id}/{repeat}"),
            tags=(f"experiment:{meta.name}", f"item:{item.item_id}"),
            metadata={"experiment": meta.name, "dataset": meta.dataset,
                      "version": meta.version, "item_id": item.item_id, "repeat": repeat})
    except Exception as exc:  # the run failed: recorded as such, scored as a failure
        return _Tried(item=item, repeat=repeat, run_id=None, answer=None,
                      latency_ms=(time.perf_counter() - began) * 1000,
                      error=f"{type(exc).__name__}: {exc}")
    return _Tried(item=item, repeat=repeat, run_id=result.run_id, answer=result.answer,
                  latency_ms=(time.perf_counter() - began) * 1000, error=None)


def _run_all(target: Any, root: Path, data: Dataset, meta: ExperimentMeta, concurrency: int,
             repeat: int, progress: Callable[[int, int], object] | None) -> list[_Tried]:
    recorder = Recorder(sinks=[ParquetSink(root)])
    try:
        base = build_agent(target, recorder)
        local = threading.local()

        def one(job: tuple[DatasetItem, int]) -> _Tried:
            if not hasattr(local, "agent"):
                local.agent = base.variant()
            return _try(local.agent, job[0], job[1], meta)

        jobs = [(item, r) for item in data.items for r in range(repeat)]
        tried: list[_Tried] = []
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            for done in pool.map(one, jobs):
                tried.append(done)
                if progress is not None:
                    progress(len(tried), len(jobs))
    finally:
        recorder.close()
    return tried


def _recorded(store: Store, name: str) -> dict[tuple[str, int], tuple[str, float | None]]:
    """``(item, repeat) -> (run id, cost)`` of the experiment's runs, failed ones too."""
    store.refresh()
    rows = store.rows(
        "SELECT run_id, cost_usd, json_extract_string(metadata, '$.item_id'), "
        "TRY_CAST(json_extract_string(metadata, '$.repeat') AS BIGINT) FROM runs "
        "WHERE list_contains(tags, ?)", [f"experiment:{name}"])
    return {(str(r[2]), int(r[3])): (str(r[0]), r[1]) for r in rows if r[2] is not None}


def run_experiment(store: Store, data: Dataset, target: Any, *, meta: ExperimentMeta,
                   scoring: Scoring, concurrency: int = 8, repeat: int = 1,
                   progress: Callable[[int, int], object] | None = None) -> Experiment:
    """Run and score every item of ``data`` with the agent ``target`` builds (an Agent or
    a factory), record the runs into ``store`` and save the results."""
    if type(concurrency) is not int or concurrency < 1:
        raise ConfigError(f"--concurrency {concurrency!r}: pass a whole number >= 1, e.g. 8")
    if type(repeat) is not int or repeat < 1:
        raise ConfigError(f"--repeat {repeat!r}: pass a whole number >= 1, e.g. 3")
    if not data.items:
        raise ConfigError(f"dataset {data.name!r} v{data.version} has no items; add runs "
                          f"first (footprint dataset add {data.name} RUN…)")
    tried = _run_all(target, store.root, data, meta, concurrency, repeat, progress)
    runs = _recorded(store, meta.name)
    results = []
    for t in tried:
        verdict, passed = score_answer(scoring, t.item, t.answer)
        run_id, cost = runs.get((t.item.item_id, t.repeat), (t.run_id, None))
        results.append(ExperimentResult(
            item_id=t.item.item_id, repeat=t.repeat, run_id=run_id, answer=t.answer,
            verdict=verdict, passed=passed, cost_usd=cost, latency_ms=t.latency_ms,
            error=t.error))
    made = time.time_ns()
    save_experiment(store, meta, results, at=made)
    return Experiment(meta=meta, results=tuple(results), created_ns=made)
