"""Experiment results in a store: one chained file per experiment, written once.

``save_experiment(store, meta, results)`` writes ``experiments/<name>.parquet``
(``recorder.store._record_files``: chained rows, a name is never reused);
``load_experiment(store, name)`` reads it back, its chain checked;
``experiment_names(store)`` lists them. The runs themselves are ordinary runs of
the store, tagged ``experiment:<name>`` and ``item:<item id>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footprint._errors import ConfigError, RunError
from recorder.store._record_files import (
    Where,
    check_chain,
    check_name,
    genesis,
    read_rows,
    root_of,
    write_chained,
    writing,
)
from recorder.store._records import EXPERIMENTS, RESULT_SCHEMA

if TYPE_CHECKING:
    from recorder.otel._evaluations import Evaluation

__all__ = ["Experiment", "ExperimentMeta", "ExperimentResult", "experiment_evaluations",
           "experiment_names", "load_experiment", "save_experiment"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentMeta:
    """What an experiment ran: a dataset version, an agent (``FILE.py:FACTORY``) and how
    answers were scored (the comparator's description)."""

    name: str
    dataset: str
    version: int
    agent: str
    comparator: str

    def __post_init__(self) -> None:
        check_name(self.name, "experiment")
        if type(self.version) is not int or self.version < 1:
            raise ConfigError(f"ExperimentMeta(version={self.version!r}): a version >= 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentResult:
    """One item tried once: the run recorded (``None`` when it never started), its answer,
    the comparator's verdict, whether that passes (``None``: nothing to pass), cost
    (``None``: unknown) and wall-clock latency."""

    item_id: str
    repeat: int
    run_id: str | None
    answer: str | None
    verdict: str
    passed: bool | None
    cost_usd: float | None
    latency_ms: float
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Experiment:
    """An experiment as stored."""

    meta: ExperimentMeta
    results: tuple[ExperimentResult, ...]
    created_ns: int


def _path(root: Path, name: str) -> Path:
    return root / EXPERIMENTS / f"{name}.parquet"


def save_experiment(where: Where, meta: ExperimentMeta, results: Sequence[ExperimentResult],
                    *, at: int | None = None) -> Path:
    """Write the experiment's file; a name already used is refused."""
    with writing(where, "experiment", meta.name, at) as w:
        head = {"experiment": meta.name, "dataset": meta.dataset, "version": meta.version,
                "agent": meta.agent, "comparator": meta.comparator, "created_ns": w.ts}
        write_chained(w.root, _path(w.root, meta.name), [{**head, **asdict(r)} for r in results],
                      genesis("experiment", meta.name), RESULT_SCHEMA)
    return _path(w.root, meta.name)


def experiment_names(where: Where) -> list[str]:
    """Every experiment of the store, oldest file first."""
    files = (root_of(where) / EXPERIMENTS).glob("*.parquet")
    return [p.stem for p in sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))]


def _result(row: dict[str, Any]) -> ExperimentResult:
    fields = ExperimentResult.__dataclass_fields__
    return ExperimentResult(**{k: row[k] for k in fields})


def load_experiment(where: Where, name: str) -> Experiment:
    """Experiment ``name``, its chain checked."""
    root = root_of(where)
    check_name(name, "experiment")
    path = _path(root, name)
    if not path.is_file():
        known = experiment_names(root)
        raise ConfigError(f"no experiment {name!r} in {str(root)!r}; experiments: "
                          f"{', '.join(known) or 'none'} (footprint experiment run DATASET …)")
    rows = read_rows(path)
    broken = check_chain(rows, genesis("experiment", name))
    if broken is not None:
        raise RunError(f"experiment {name!r}: {broken}; the file {str(path)!r} was "
                       "tampered with")
    if not rows:
        raise RunError(f"experiment {name!r} has no results ({str(path)!r})")
    first = rows[0]
    meta = ExperimentMeta(name=name, dataset=first["dataset"], version=int(first["version"]),
                          agent=first["agent"], comparator=first["comparator"])
    return Experiment(meta=meta, results=tuple(_result(r) for r in rows),
                      created_ns=int(first["created_ns"]))


def experiment_evaluations(experiment: Experiment) -> list[Evaluation]:
    """Each result of ``experiment`` with a run, as a ``gen_ai.evaluation.result`` about
    that run (``recorder.otel.export_evaluations`` sends them): named by the scoring
    (``expect``, ``label``, ``item`` or the judge ``judge:MODULE:FUNC``), valued 1 when it
    passed and 0 when not (no value when nothing was to pass), labelled ``pass``/``fail``,
    explained by the verdict, with ``error.type`` ``_OTHER`` when the run failed. A result
    whose run never started evaluates no run: it is left out."""
    from recorder.otel._evaluations import Evaluation

    meta = experiment.meta
    kind = meta.comparator if meta.comparator.startswith("judge:") else \
        meta.comparator.partition(":")[0]
    where: dict[str, str | int] = {
        "footprint.experiment.name": meta.name, "footprint.dataset.name": meta.dataset,
        "footprint.dataset.version": meta.version,
        "footprint.experiment.comparator": meta.comparator}
    return [Evaluation(
        run_id=r.run_id, key=f"experiment:{meta.name}:{r.item_id}:{r.repeat}", name=kind,
        ts_ns=experiment.created_ns,
        value=None if r.passed is None else float(r.passed),
        label=None if r.passed is None else ("pass" if r.passed else "fail"),
        explanation=r.error if r.error else r.verdict,
        error_type="_OTHER" if r.error else None,
        attributes={**where, "footprint.experiment.item_id": r.item_id,
                    "footprint.experiment.repeat": r.repeat},
    ) for r in experiment.results if r.run_id is not None]
