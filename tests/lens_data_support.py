"""A store for the lens's sessions and experiments screens, the same on every recording.

The helpdesk of ``examples/release_regression.py``: its 20 production
questions asked by five customers (the first ten in two sessions of five,
tagged ``prod``), each labelled with the answer it should hold (feedback
``expected``) and some rated (``helpful``); one two-turn conversation with no
session; the dataset ``helpdesk`` made of the ``prod`` runs; and two experiments
on it: ``baseline`` (the production runs themselves) and ``changed`` (release
1.1, whose ``returns`` fact regresses the 3 items about opened items). Run ids
are seeded and latencies fixed, so snapshots come out the same.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from footprint import SeededIds
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, feedback

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "release_regression.py"
T0 = 1_767_225_600_000_000_000


def example() -> ModuleType:
    """``examples/release_regression.py`` as a module (its factories are the agents)."""
    if "release_regression" in sys.modules:
        return sys.modules["release_regression"]
    spec = importlib.util.spec_from_file_location("release_regression", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["release_regression"] = module
    spec.loader.exec_module(module)
    return module


def _production(path: Path, ex: ModuleType) -> list[str]:
    ids = []
    with Recorder(sinks=[ParquetSink(path)]) as rec:
        agent = ex.baseline(sink=rec)
        for i, question in enumerate(ex.QUESTIONS):
            tags = ("prod", "returns") if "return" in question else ("prod",)
            ids.append(agent.variant(ids=SeededIds(i)).run_sync(
                question, user=f"customer-{i % 5}", tags=tags,
                session=f"chat-{i // 5}" if i < 10 else None).run_id)
        talk = agent.variant(ids=SeededIds(99))
        talk.run_sync("Do you ship to Oslo?", user="customer-9")
        talk.follow_up_sync("And how long does shipping to Oslo take?", user="customer-9")
    for i, (run_id, question) in enumerate(zip(ids, ex.QUESTIONS, strict=True)):
        feedback(path, run_id, "expected", label=ex.expected_of(question), by="support",
                 at=T0 + i)
        if i < 10:
            feedback(path, run_id, "helpful", value=float(i % 3 != 0), at=T0 + 100 + i)
    return ids


def _experiments(path: Path, ex: ModuleType) -> None:
    """``baseline``: the dataset's source runs; ``changed``: each item run by release 1.1."""
    from lens.explain._experiment_run import score_answer, scoring_from
    from recorder import open_store
    from recorder._datasets import load_dataset
    from recorder._experiments import ExperimentMeta, ExperimentResult, save_experiment

    data = load_dataset(path, "helpdesk")
    runs: dict[str, list[str | None]] = {"baseline": [i.source_run for i in data.items],
                                         "release_changed": []}
    with Recorder(sinks=[ParquetSink(path)]) as rec:
        changed = ex.release_changed(sink=rec)
        for n, item in enumerate(data.items):
            runs["release_changed"].append(changed.variant(ids=SeededIds(200 + n)).run_sync(
                item.message, tags=("experiment:changed", f"item:{item.item_id}")).run_id)
    with open_store(path) as store:
        answers = dict(store.rows("SELECT run_id, answer FROM runs"))
    scoring = scoring_from("item")
    for k, (name, factory) in enumerate((("baseline", "baseline"),
                                         ("changed", "release_changed"))):
        results = []
        for n, (item, run_id) in enumerate(zip(data.items, runs[factory], strict=True)):
            verdict, passed = score_answer(scoring, item, answers.get(run_id))
            results.append(ExperimentResult(
                item_id=item.item_id, repeat=0, run_id=run_id, answer=answers.get(run_id),
                verdict=verdict, passed=passed, cost_usd=0.0, latency_ms=10.0 + n + 5 * k))
        meta = ExperimentMeta(name=name, dataset=data.name, version=data.version,
                              agent=f"{EXAMPLE}:{factory}", comparator=scoring.spec())
        save_experiment(path, meta, results, at=T0 + 10**12 * (k + 1))


def record_lens_data(path: Path) -> list[str]:
    """Write the store at ``path``; the production runs' ids, in order."""
    ex = example()
    ids = _production(path, ex)
    code = footprint(["dataset", "create", "helpdesk", "--from-runs", "--tag", "prod",
                      "--expected-from-feedback", "--store", str(path)])
    assert code == 0
    _experiments(path, ex)
    return ids
