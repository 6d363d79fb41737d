"""recorder.otel — the recorder's events mirrored as OpenTelemetry GenAI spans.

``OTelSink`` is a recorder sink (spans built on the recorder's background
thread, exported on their own); ``OTelIds`` derives the trace id from the
run id and span ids from span keys, so ``Recorder(processors=[sink.stamp])``
writes the very same ids into the Parquet record; ``export_otlp`` replays a
stored run to an OTLP endpoint with its original timestamps (one process,
or split across processes at iteration ends: ``_chunks``, sharing ``_pump``);
``export_evaluations`` sends evaluation results (an experiment's verdicts) as
``gen_ai.evaluation.result`` spans in the traces of the runs they evaluate.

May import: ``footprint``, ``recorder.write`` and ``recorder.store``; never
``recorder.ingest``.
"""

from recorder.otel._backfill import BackfillResult, export_events, export_otlp
from recorder.otel._evaluations import Evaluation, EvaluationExport, export_evaluations
from recorder.otel._ids import OTelIds, span_id_of, span_key, trace_id_of
from recorder.otel._setup import CONTENT_ENV, capture_content_from_env, otlp_exporter
from recorder.otel._sink import OTelSink, OTelStats

__all__ = [
    "CONTENT_ENV",
    "BackfillResult",
    "Evaluation",
    "EvaluationExport",
    "OTelIds",
    "OTelSink",
    "OTelStats",
    "capture_content_from_env",
    "export_evaluations",
    "export_events",
    "export_otlp",
    "otlp_exporter",
    "span_id_of",
    "span_key",
    "trace_id_of",
]
