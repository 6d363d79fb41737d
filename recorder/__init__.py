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
    from recorder._adopt import adopt_orphans
    from recorder._catalog import Store, open_store
    from recorder._chain import (
        CHAIN_FORMAT,
        canonical_json,
        envelope_canonical,
        frame,
        record_canonical,
        row_check,
    )
    from recorder._discover import StoreWarning
    from recorder._layout import default_store_path
    from recorder._parquet_sink import ParquetSink
    from recorder._process import (
        API_KEY_PATTERNS,
        CONTENT_FIELDS,
        CaptureLevel,
        Redactor,
        capture,
        marker,
    )
    from recorder._query import EventQuery
    from recorder._reader import DECODE_COLUMNS, StoreReader
    from recorder._recorder import Recorder, RecorderStats
    from recorder._rows import BLOB_SCHEMA, EVENT_SCHEMA, HOT_FIELDS
    from recorder._runlist import RUN_COLUMNS, STATUSES, RunQuery, count_runs, list_runs
    from recorder._sandbox import SqlRefused
    from recorder._sink import DROP, Drop, EmitSink, ExportResult, Processor, Sink, StatsAware
    from recorder._summary import IterationSpan, RunSummary
    from recorder._upcast import UPCASTERS, upcast
    from recorder._verify import VerifyResult, verify_run
    from recorder._views import VIEWS

_HOME = {
    "adopt_orphans": "recorder._adopt",
    "Store": "recorder._catalog",
    "open_store": "recorder._catalog",
    "CHAIN_FORMAT": "recorder._chain",
    "canonical_json": "recorder._chain",
    "envelope_canonical": "recorder._chain",
    "frame": "recorder._chain",
    "record_canonical": "recorder._chain",
    "row_check": "recorder._chain",
    "StoreWarning": "recorder._discover",
    "default_store_path": "recorder._layout",
    "ParquetSink": "recorder._parquet_sink",
    "API_KEY_PATTERNS": "recorder._process",
    "CONTENT_FIELDS": "recorder._process",
    "CaptureLevel": "recorder._process",
    "Redactor": "recorder._process",
    "capture": "recorder._process",
    "marker": "recorder._process",
    "EventQuery": "recorder._query",
    "DECODE_COLUMNS": "recorder._reader",
    "StoreReader": "recorder._reader",
    "Recorder": "recorder._recorder",
    "RecorderStats": "recorder._recorder",
    "BLOB_SCHEMA": "recorder._rows",
    "EVENT_SCHEMA": "recorder._rows",
    "HOT_FIELDS": "recorder._rows",
    "RUN_COLUMNS": "recorder._runlist",
    "STATUSES": "recorder._runlist",
    "RunQuery": "recorder._runlist",
    "count_runs": "recorder._runlist",
    "list_runs": "recorder._runlist",
    "SqlRefused": "recorder._sandbox",
    "DROP": "recorder._sink",
    "Drop": "recorder._sink",
    "EmitSink": "recorder._sink",
    "ExportResult": "recorder._sink",
    "Processor": "recorder._sink",
    "Sink": "recorder._sink",
    "StatsAware": "recorder._sink",
    "IterationSpan": "recorder._summary",
    "RunSummary": "recorder._summary",
    "UPCASTERS": "recorder._upcast",
    "upcast": "recorder._upcast",
    "VerifyResult": "recorder._verify",
    "verify_run": "recorder._verify",
    "VIEWS": "recorder._views",
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
    "RUN_COLUMNS",
    "STATUSES",
    "UPCASTERS",
    "VIEWS",
    "CaptureLevel",
    "Drop",
    "EmitSink",
    "EventQuery",
    "ExportResult",
    "IterationSpan",
    "ParquetSink",
    "Processor",
    "Recorder",
    "RecorderStats",
    "Redactor",
    "RunQuery",
    "RunSummary",
    "Sink",
    "SqlRefused",
    "StatsAware",
    "Store",
    "StoreReader",
    "StoreWarning",
    "VerifyResult",
    "adopt_orphans",
    "canonical_json",
    "capture",
    "count_runs",
    "default_store_path",
    "envelope_canonical",
    "frame",
    "list_runs",
    "marker",
    "open_store",
    "record_canonical",
    "row_check",
    "upcast",
    "verify_run",
]


__getattr__, __dir__ = lazy_names('recorder', _HOME, __all__)
