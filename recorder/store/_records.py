"""Datasets and experiment results in a store: their files, schemas and SQL views.

A dataset version is one Parquet file ``datasets/<name>.v<NNNN>.parquet`` holding
every item of that version (adding items writes the next version whole; older
versions stay, so an experiment keeps the items it ran on). An experiment is one
file ``experiments/<name>.parquet``: a row per item and repeat, each naming the
run it recorded. Rows of both are chained (``recorder.store._record_files``): each row's
``head`` is the SHA-256 of the previous head and the row's canonical JSON.

Views (made next to the catalog's ``VIEWS``, DuckDB only): ``datasets`` (one row
per version), ``dataset_items``, ``experiments`` (one row per experiment) and
``experiment_results``.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

__all__ = ["DATASETS", "DATASET_SCHEMA", "EXPERIMENTS", "RECORD_VIEWS", "RESULT_SCHEMA",
           "record_files"]

DATASETS = "datasets"
EXPERIMENTS = "experiments"

DATASET_SCHEMA = pa.schema([
    pa.field("dataset", pa.string(), nullable=False),
    pa.field("version", pa.int64(), nullable=False),
    pa.field("position", pa.int64(), nullable=False),
    pa.field("item_id", pa.string(), nullable=False),
    pa.field("message", pa.string(), nullable=False),
    pa.field("history", pa.string(), nullable=False),
    pa.field("expected", pa.string()),
    pa.field("labels", pa.string()),
    pa.field("source_run", pa.string()),
    pa.field("source_turn", pa.int64()),
    pa.field("created_ns", pa.int64(), nullable=False),
    pa.field("prev_head", pa.string(), nullable=False),
    pa.field("head", pa.string(), nullable=False),
])
"""One row per item of one version; ``history`` is a JSON list of ``{role, content}``,
``labels`` a JSON object (or null)."""

RESULT_SCHEMA = pa.schema([
    pa.field("experiment", pa.string(), nullable=False),
    pa.field("dataset", pa.string(), nullable=False),
    pa.field("version", pa.int64(), nullable=False),
    pa.field("item_id", pa.string(), nullable=False),
    pa.field("repeat", pa.int64(), nullable=False),
    pa.field("run_id", pa.string()),
    pa.field("agent", pa.string(), nullable=False),
    pa.field("comparator", pa.string(), nullable=False),
    pa.field("answer", pa.string()),
    pa.field("verdict", pa.string(), nullable=False),
    pa.field("passed", pa.bool_()),
    pa.field("cost_usd", pa.float64()),
    pa.field("latency_ms", pa.float64()),
    pa.field("error", pa.string()),
    pa.field("created_ns", pa.int64(), nullable=False),
    pa.field("prev_head", pa.string(), nullable=False),
    pa.field("head", pa.string(), nullable=False),
])
"""One row per item and repeat of one experiment: the run it recorded, its verdict
(the comparator's key) and whether that is a pass (``None``: no expectation)."""


def record_files(root: Path) -> tuple[list[Path], list[Path]]:
    """The dataset version files and the experiment files under ``root``, sorted."""
    return (sorted((root / DATASETS).glob("*.v*.parquet")),
            sorted((root / EXPERIMENTS).glob("*.parquet")))


RECORD_VIEWS: tuple[tuple[str, str], ...] = (
    ("dataset_items", """
        SELECT dataset, version, position, item_id, message, history, expected, labels,
               source_run, source_turn, make_timestamp(created_ns // 1000) AS created, head
        FROM _datasets_all"""),
    ("datasets", """
        SELECT dataset, version, count(*) AS items,
               make_timestamp(max(created_ns) // 1000) AS created,
               arg_max(head, position) AS head
        FROM _datasets_all GROUP BY dataset, version"""),
    ("experiment_results", """
        SELECT experiment, dataset, version, item_id, repeat, run_id, agent, comparator,
               answer, verdict, passed, cost_usd, latency_ms, error,
               make_timestamp(created_ns // 1000) AS created
        FROM _experiments_all"""),
    ("experiments", """
        SELECT experiment, any_value(dataset) AS dataset, any_value(version) AS version,
               any_value(agent) AS agent, any_value(comparator) AS comparator,
               count(DISTINCT item_id) AS items, max(repeat) + 1 AS repeats,
               count(*) FILTER (WHERE passed) AS passed,
               count(*) FILTER (WHERE passed IS NOT NULL) AS judged,
               sum(cost_usd) AS cost_usd,
               make_timestamp(max(created_ns) // 1000) AS created
        FROM _experiments_all GROUP BY experiment"""),
)
"""``(name, select)`` over ``_datasets_all`` and ``_experiments_all``."""
