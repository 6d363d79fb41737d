"""recorder — every decision as a typed event, durable in Parquet and queryable in SQL.

``Recorder(sinks=[ParquetSink()], processors=[Redactor()])`` is an
``EventSink`` for the engine; ``open_store(path).sql(query)`` reads the
store back through DuckDB; ``StoreReader(store)`` reads a run by need
(paged, filtered, columnar; typed events only for the rows asked for, and
``summary(run_id)`` for its outline); ``verify_run(store, run_id)`` checks a
run's audit chain (SHA-256 heads, row checks). ``VIEWS`` holds the catalog's
view definitions for DuckDB, ``recorder.spark`` the same views for Spark SQL.
"""

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
