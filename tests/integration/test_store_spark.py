"""The store read by Apache Spark (local mode, no network): every catalog view gives
the same columns and rows in Spark SQL as in DuckDB, over one store holding
real agent runs, labelled runs, a large blobbed text and hand-built decisions
(rejection, escalation, route conflict)."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from failed_runs import failing_agent

from footprint._errors import RunError
from footprint.events import (
    ConflictItem,
    Event,
    RouteConflict,
    RunEnd,
    RunSource,
    RunStart,
    SkillEscalated,
    SkillRejected,
)
from lens._examples.support_desk import make_agent
from recorder import VIEWS, ParquetSink, Recorder, open_store
from recorder.spark import DUCKDB_ONLY, SPARK_VIEWS, register_views

T0 = 1_767_225_600_000_000_000


def _decisions(run_id: str) -> list[Event]:
    return [
        RunStart(run_id=run_id, seq=0, ts=T0, user_message="x" * 5000, user_id="u-9",
                 tags=("spark",), metadata={"n": 3}),
        SkillRejected(run_id=run_id, seq=1, ts=T0 + 1, iteration=1, requested_id="billing",
                      reason="unreachable", allowed=("triage", "refunds"),
                      current_skill_id="triage", posture="rails"),
        SkillEscalated(run_id=run_id, seq=2, ts=T0 + 2, iteration=1, after_refusals=2,
                       refusals=2, from_provider="p", from_model="small", to_provider="p",
                       to_model="big"),
        RouteConflict(run_id=run_id, seq=3, ts=T0 + 3, iteration=1,
                      winner=ConflictItem(tool_name="a", target="refunds", tool_call_id="c1"),
                      losers=(ConflictItem(tool_name="b", target="billing"),),
                      from_skill_id="triage", source="on_tool_return"),
        RunSource(run_id=run_id, seq=4, ts=T0 + 4, source="otlp", framework="pydantic-ai",
                  dialect="otel-genai", fidelity="partial", foreign_trace_id="ab" * 16,
                  unknown=("why each piece was admitted",), flagged=("llm#1: cut",)),
        RunEnd(run_id=run_id, seq=5, ts=T0 + 5, final_content="y" * 3000,
               total_input_tokens=5, total_output_tokens=6),
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spark-store")
    with Recorder(sinks=[ParquetSink(root)]) as rec:
        make_agent(sink=rec).answer()
        make_agent(sink=rec, without=("legacy-window-fact",)).run_sync(
            "Refund order A1001, please", user="u-1", session="s-1", tags=["beta", "eu"],
            metadata={"ticket": "T-7", "vip": True})
        for event in _decisions("0190ffff-handmade"):
            rec.emit(event)
        with pytest.raises(RunError):  # a failed run of a priced model: errors and costs
            failing_agent(rec).run_sync("where is my order A-17?")
    return root


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:  # starting Spark takes ~10 s: the tests that use it are slow
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("footprint-parity")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _norm(value: Any) -> Any:
    """One comparable form for both engines' values (JSON text parsed, floats rounded)."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return _norm(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat()
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def _sorted(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(_norm(v) for v in r) for r in rows), key=repr)


def test_given_the_two_dialects_when_listed_then_they_define_the_same_views_in_order() -> None:
    assert [name for name, _ in SPARK_VIEWS] == [name for name, _ in VIEWS]


@pytest.mark.parametrize("name", [name for name, _ in SPARK_VIEWS])
def test_given_a_duckdb_view_when_translated_then_no_duckdb_only_spelling_is_left(
    name: str,
) -> None:
    select = dict(SPARK_VIEWS)[name]
    assert [token for token in DUCKDB_ONLY if token in select] == []


@pytest.mark.slow
def test_given_one_store_when_read_by_spark_and_duckdb_then_every_view_has_the_same_rows(
    store: Path, spark: Any,
) -> None:
    names = register_views(spark, store)
    assert names == [name for name, _ in VIEWS]
    with open_store(store) as duck:
        for name in names:
            relation = duck.sql(f"SELECT * FROM {name}")
            frame = spark.sql(f"SELECT * FROM {name}")
            assert frame.columns == relation.columns, name
            want = _sorted(relation.fetchall())
            got = _sorted([tuple(r) for r in frame.collect()])
            assert got == want, name
            assert want, f"view {name} is empty: the store covers it too little"


@pytest.mark.slow
def test_given_labels_when_read_by_spark_then_runs_filter_by_them(
    store: Path, spark: Any,
) -> None:
    register_views(spark, store)
    rows = spark.sql("SELECT user_id, tags, get_json_object(metadata, '$.ticket') AS t "
                     "FROM runs WHERE array_contains(tags, 'beta')").collect()
    assert [tuple(r) for r in rows] == [("u-1", ["beta", "eu"], "T-7")]
