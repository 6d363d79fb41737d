"""recorder — every decision as a typed event, durable in Parquet and queryable in SQL.

``Recorder(sinks=[ParquetSink()], processors=[Redactor()])`` is an
``EventSink`` for the engine; ``open_store(path).sql(query)`` reads the
store back through DuckDB; ``StoreReader(store)`` reads a run by need
(paged, filtered, columnar; typed events only for the rows asked for, and
``summary(run_id)`` for its outline); ``verify_run(store, run_id)`` checks a
run's audit chain (SHA-256 heads, row checks). ``VIEWS`` holds the catalog's
view definitions for DuckDB, ``recorder.spark`` the same views for Spark SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint._lazy import lazy_names

if TYPE_CHECKING:
    from recorder._evaluate import EvaluateInterrupted, StoredRun, evaluate
    from recorder._feedback import Score, feedback, record_scores
    from recorder._online import OnlineEvaluation, OnlineStats, Recorder
    from recorder.store._bounded import SqlTimeout
    from recorder.store._catalog import Store, open_store
    from recorder.store._discover import StoreWarning
    from recorder.store._query import EventQuery
    from recorder.store._reader import DECODE_COLUMNS, StoreReader
    from recorder.store._runlist import (
        RUN_COLUMNS,
        STATUSES,
        RunQuery,
        count_runs,
        list_runs,
        run_costs,
    )
    from recorder.store._sandbox import SqlRefused
    from recorder.store._summary import IterationSpan, RunSummary
    from recorder.store._trends import TrendQuery, trends
    from recorder.store._upcast import UPCASTERS, upcast
    from recorder.store._verify import VerifyResult, verify_run
    from recorder.store._views import VIEWS
    from recorder.write._adopt import adopt_orphans
    from recorder.write._chain import (
        CHAIN_FORMAT,
        canonical_json,
        envelope_canonical,
        frame,
        record_canonical,
        row_check,
    )
    from recorder.write._layout import default_store_path
    from recorder.write._parquet_sink import ParquetSink
    from recorder.write._process import (
        API_KEY_PATTERNS,
        CONTENT_FIELDS,
        CaptureLevel,
        Redactor,
        capture,
        marker,
    )
    from recorder.write._recorder import RecorderStats
    from recorder.write._redact_key import (
        REDACT_KEY_ENV,
        Marker,
        RedactionKey,
        known_redaction_key,
        marker_matches,
        parse_marker,
        redaction_key,
    )
    from recorder.write._rows import BLOB_SCHEMA, EVENT_SCHEMA, HOT_FIELDS
    from recorder.write._sink import DROP, Drop, EmitSink, ExportResult, Processor, Sink, StatsAware

_HOME = {
    "Score": "recorder._feedback",
    "EvaluateInterrupted": "recorder._evaluate",
    "StoredRun": "recorder._evaluate",
    "OnlineEvaluation": "recorder._online",
    "OnlineStats": "recorder._online",
    "evaluate": "recorder._evaluate",
    "feedback": "recorder._feedback",
    "record_scores": "recorder._feedback",
    "adopt_orphans": "recorder.write._adopt",
    "Store": "recorder.store._catalog",
    "open_store": "recorder.store._catalog",
    "CHAIN_FORMAT": "recorder.write._chain",
    "canonical_json": "recorder.write._chain",
    "envelope_canonical": "recorder.write._chain",
    "frame": "recorder.write._chain",
    "record_canonical": "recorder.write._chain",
    "row_check": "recorder.write._chain",
    "StoreWarning": "recorder.store._discover",
    "default_store_path": "recorder.write._layout",
    "ParquetSink": "recorder.write._parquet_sink",
    "API_KEY_PATTERNS": "recorder.write._process",
    "CONTENT_FIELDS": "recorder.write._process",
    "CaptureLevel": "recorder.write._process",
    "Redactor": "recorder.write._process",
    "capture": "recorder.write._process",
    "marker": "recorder.write._process",
    "REDACT_KEY_ENV": "recorder.write._redact_key",
    "Marker": "recorder.write._redact_key",
    "RedactionKey": "recorder.write._redact_key",
    "known_redaction_key": "recorder.write._redact_key",
    "marker_matches": "recorder.write._redact_key",
    "parse_marker": "recorder.write._redact_key",
    "redaction_key": "recorder.write._redact_key",
    "EventQuery": "recorder.store._query",
    "DECODE_COLUMNS": "recorder.store._reader",
    "StoreReader": "recorder.store._reader",
    "Recorder": "recorder._online",
    "RecorderStats": "recorder.write._recorder",
    "BLOB_SCHEMA": "recorder.write._rows",
    "EVENT_SCHEMA": "recorder.write._rows",
    "HOT_FIELDS": "recorder.write._rows",
    "RUN_COLUMNS": "recorder.store._runlist",
    "STATUSES": "recorder.store._runlist",
    "RunQuery": "recorder.store._runlist",
    "count_runs": "recorder.store._runlist",
    "list_runs": "recorder.store._runlist",
    "run_costs": "recorder.store._runlist",
    "SqlRefused": "recorder.store._sandbox",
    "SqlTimeout": "recorder.store._bounded",
    "DROP": "recorder.write._sink",
    "Drop": "recorder.write._sink",
    "EmitSink": "recorder.write._sink",
    "ExportResult": "recorder.write._sink",
    "Processor": "recorder.write._sink",
    "Sink": "recorder.write._sink",
    "StatsAware": "recorder.write._sink",
    "IterationSpan": "recorder.store._summary",
    "RunSummary": "recorder.store._summary",
    "UPCASTERS": "recorder.store._upcast",
    "upcast": "recorder.store._upcast",
    "VerifyResult": "recorder.store._verify",
    "verify_run": "recorder.store._verify",
    "VIEWS": "recorder.store._views",
    "TrendQuery": "recorder.store._trends",
    "trends": "recorder.store._trends",
}
"""Where each public name lives: imported on first use, so a command that reads the
store does not pay for the writer, the processors and the verifier (and the other way round)."""

__all__ = [
    "API_KEY_PATTERNS",
    "BLOB_SCHEMA",
    "CHAIN_FORMAT",
    "CONTENT_FIELDS",
    "DECODE_COLUMNS",
    "DROP",
    "EVENT_SCHEMA",
    "HOT_FIELDS",
    "REDACT_KEY_ENV",
    "RUN_COLUMNS",
    "STATUSES",
    "UPCASTERS",
    "VIEWS",
    "CaptureLevel",
    "Drop",
    "EmitSink",
    "EvaluateInterrupted",
    "EventQuery",
    "ExportResult",
    "IterationSpan",
    "Marker",
    "OnlineEvaluation",
    "OnlineStats",
    "ParquetSink",
    "Processor",
    "Recorder",
    "RecorderStats",
    "RedactionKey",
    "Redactor",
    "RunQuery",
    "RunSummary",
    "Score",
    "Sink",
    "SqlRefused",
    "SqlTimeout",
    "StatsAware",
    "Store",
    "StoreReader",
    "StoreWarning",
    "StoredRun",
    "TrendQuery",
    "VerifyResult",
    "adopt_orphans",
    "canonical_json",
    "capture",
    "count_runs",
    "default_store_path",
    "envelope_canonical",
    "evaluate",
    "feedback",
    "frame",
    "known_redaction_key",
    "list_runs",
    "marker",
    "marker_matches",
    "open_store",
    "parse_marker",
    "record_canonical",
    "record_scores",
    "redaction_key",
    "row_check",
    "run_costs",
    "trends",
    "upcast",
    "verify_run",
]


__getattr__, __dir__ = lazy_names('recorder', _HOME, __all__)
