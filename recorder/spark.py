"""The store's views on Apache Spark: the same names, columns and rows as DuckDB's.

The store is plain Hive-partitioned Parquet, so Spark reads it unchanged;
this module adds the catalog's views on top, written in Spark SQL::

    from pyspark.sql import SparkSession
    from recorder.spark import register_views

    spark = SparkSession.builder.getOrCreate()
    register_views(spark, "s3a://bucket/footprint")    # or a local directory
    spark.sql("SELECT run_id, status, tokens FROM runs").show()

Spark reads *sealed* data (``events/``, ``blobs/``, ``stats/``); events still
in a writer's live segment appear once the writer seals them (on close or
rotation). :data:`SPARK_VIEWS` holds the definitions, translated from
:data:`recorder.VIEWS` (DuckDB) by :func:`to_spark`, so the two never drift
apart; a test runs both over one store and compares every view's rows. Set
the session time zone to UTC (``spark.sql.session.timeZone``) for
``started``/``ended`` to read as DuckDB's.
pyspark is not a dependency of footprint: install it to use this module.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from recorder.store._prices import PRICES_DDL, Prices, load_prices
from recorder.store._views import PLAIN_VIEWS as VIEWS
from recorder.write._layout import BLOBS, EVENTS, STATS

__all__ = ["DUCKDB_ONLY", "SPARK_VIEWS", "register_views", "to_spark"]

_RULES: tuple[tuple[str, str], ...] = (
    # a blob reference: the key "$blob" under a payload field
    (r"""json_extract_string\(([\w.]+), '\$\.(\w+)\."\$blob"'\)""",
     r"""get_json_object(\1, "$.\2['$blob']")"""),
    (r"CAST\(json_extract\(([\w.]+), '([^']+)'\) AS VARCHAR\[\]\)",
     r"from_json(get_json_object(\1, '\2'), 'array<string>')"),
    (r"CAST\(\[\] AS VARCHAR\[\]\)", "CAST(array() AS array<string>)"),
    (r"\bjson_extract_string\(", "get_json_object("),
    (r"\bjson_extract\(", "get_json_object("),
    (r"\bTRY_CAST\(", "try_cast("),
    (r"\barg_min\(", "min_by("),
    (r"\barg_max\(", "max_by("),
    (r"\bany_value\(", "first("),
    (r"\bsha256\((\w+)\)", r"sha2(\1, 256)"),
    # a map built from rows: DuckDB's list of structs, Spark's collected structs
    (r"list\(struct_pack\(k := (\w+), v := (\w+)\)\)",
     r"collect_list(struct(\1 AS k, \2 AS v))"),
    (r"make_timestamp\(([\w.]+) // 1000\)", r"timestamp_micros(\1 div 1000)"),
    # a correlated scalar subquery must aggregate in Spark (blobs has one row per hash)
    (r"\(SELECT b\.text FROM blobs b", "(SELECT first(b.text) FROM blobs b"),
)
"""DuckDB constructs the catalog's views use, and their Spark SQL spelling."""

DUCKDB_ONLY = ("json_extract", "arg_min", "arg_max", "any_value", "make_timestamp", "//",
               "VARCHAR[]", "TRY_CAST", '"$blob"', "struct_pack", "sha256(")
"""Spellings that must not survive translation (a test checks every view)."""


def to_spark(select: str) -> str:
    """One DuckDB view definition of the catalog, spelled in Spark SQL."""
    for pattern, replacement in _RULES:
        select = re.sub(pattern, replacement, select)
    return select


SPARK_VIEWS: tuple[tuple[str, str], ...] = tuple((name, to_spark(sql)) for name, sql in VIEWS)
"""``(name, select)`` in Spark SQL, in the same order and with the same columns as DuckDB's."""


def _join(root: str, part: str) -> str:
    return root.rstrip("/") + "/" + part if "://" in root else os.path.join(root, part)


def _read(spark: Any, path: str, *, hive: bool) -> Any:
    if "://" not in path and not os.path.isdir(path):
        return None
    reader = spark.read.option("mergeSchema", "true")
    if hive:
        reader = reader.option("basePath", path)
    try:
        return reader.parquet(path)
    except Exception as exc:  # an absent folder: nothing sealed there yet
        if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
            return None
        raise


def register_views(spark: Any, path: str | os.PathLike[str], *,
                   prices: Prices | None = None) -> list[str]:
    """Register the store at ``path`` (a directory or an ``s3a://``-style URI) as
    temporary views on ``spark``: the raw ``_events_all``, ``_blobs_all`` and
    ``_stats_all``, the ``_prices`` of its models, then every catalog view. Returns
    the catalog views' names. ``prices`` defaults to the store's own (its
    ``prices.json`` over ``genai-prices``; a URI's ``prices.json`` is not read)."""
    root = os.fspath(path)
    raw = {"_events_all": (EVENTS, True), "_blobs_all": (BLOBS, False),
           "_stats_all": (STATS, False)}
    for name, (folder, hive) in raw.items():
        frame = _read(spark, _join(root, folder), hive=hive)
        if frame is None:
            frame = spark.createDataFrame([], _EMPTY[name])
        frame.createOrReplaceTempView(name)
    present = spark.table("_stats_all").columns
    missing = [c for c in ("sink_drops", "unencodable") if c not in present]
    if missing:  # stats written before those counts were kept
        zeros = ", ".join(f"CAST(0 AS BIGINT) AS {c}" for c in missing)
        spark.sql(f"SELECT *, {zeros} FROM _stats_all").createOrReplaceTempView("_stats_all")
    _register_prices(spark, root, prices)
    for name, select in SPARK_VIEWS:
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {select}")
    return [name for name, _ in SPARK_VIEWS]


def _register_prices(spark: Any, root: str, prices: Prices | None) -> None:
    if prices is None:
        prices = Prices() if "://" in root else load_prices(Path(root))
    models = [r[0] for r in spark.sql(
        "SELECT DISTINCT model FROM _events_all WHERE type IN ('llm.start', 'llm.end') "
        "AND model IS NOT NULL").collect()]
    rows = [tuple(row.values()) for row in prices.rows(models)]  # in PRICES_DDL's order
    frame = spark.createDataFrame(rows, PRICES_DDL)
    frame.createOrReplaceTempView("_prices")


_EMPTY = {
    "_events_all": (
        "schema_version INT, run_id STRING, seq BIGINT, ts BIGINT, type STRING, turn BIGINT, "
        "iteration BIGINT, step_id STRING, parent_step STRING, trace_id STRING, span_id STRING, "
        "skill_id STRING, from_skill STRING, to_skill STRING, moved_by STRING, reason STRING, "
        "injection_id STRING, slot STRING, flavor STRING, tool_name STRING, "
        "tool_call_id STRING, model STRING, content_hash STRING, admitted_by BIGINT, "
        "admitted_via STRING, payload STRING, prev_check BIGINT, row_check BIGINT, date DATE"),
    "_blobs_all": "hash STRING, chars BIGINT, text STRING",
    "_stats_all": ("run_id STRING, writer STRING, overflow BIGINT, processor_drops BIGINT, "
                   "sink_drops BIGINT, written_ns BIGINT, unencodable BIGINT"),
}
