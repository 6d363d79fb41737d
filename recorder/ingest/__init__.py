"""OTLP intake: take in OpenTelemetry GenAI traces from other frameworks as runs.

Three doors, one mapper: :class:`Receiver` (OTLP/HTTP protobuf and JSON, gzip,
``/v1/traces`` and ``/v1/logs``; optional gRPC) behind ``footprint receive``,
:func:`ingest_files` (OTLP/JSON lines as the Collector's file exporter writes them,
and OTLP protobuf files) behind ``footprint ingest``, and :class:`SpanProcessor` for
an app's own OpenTelemetry SDK. Each takes ``processors=`` as a native recording does
(``[Redactor()]``; :func:`store_redactor` reads ``STORE/redaction.json``): every
redactor's patterns act on the raw batch before it is stored, and all processors on
the mapped events before they are written. Every batch is stored raw first
(``STORE/ingest/raw/``), then decoded and mapped; :func:`remap` drops the mapped runs
and maps every raw batch again (runs a compaction merged stay as stored and are
skipped: ``recorder.ingest._forget``). A bad batch, an unknown dialect or a span with no
content is counted per batch (:class:`BatchReport`), never raised.

Mapping (adapters in order: OTel GenAI JSON, OpenInference, legacy indexed): one
trace is one run (``gen_ai.conversation.id`` / ``session.id`` across traces make a
conversation, one turn per trace); ``invoke_agent`` or the root span names the agent;
each chat span is one iteration; each tool span a ``tool.start``/``tool.end``; a
failed span ends the run with ``run.error``. A ``run.source`` event (seq 1) says the
run came from a foreign trace: ``framework``, ``dialect``, ``fidelity``
(``request-level``/``partial``/``usage-only``), ``unknown`` (what such a trace
cannot tell) and ``flagged`` (content the emitter cut or dropped). Run ids are fixed
by the trace id, so a remap finds the same runs.

The contract with re-sending (``why --resend``), per chat span ``llm#k`` in
iteration ``k``:

- ``llm.start.request_ref`` is the whole request in footprint's canonical request
  JSON (``footprint.agent._wire.request_json``, as native runs record it): ``model``,
  ``system`` (every system instruction, joined by a blank line), ``messages`` (role,
  content, ``tool_calls`` with ids and arguments, ``tool_call_id``, ``tool_name``),
  ``tools`` (name, description, ``input_schema``), ``temperature``, ``max_tokens``;
  ``request_hash`` is its SHA-256. It is ``None`` when the span carried no content
  (``fidelity`` then says so).
- Before it, one ``context.injected`` per piece of that request, in slot order, with
  ``injection_id`` a stable piece id and ``content_hash`` the SHA-256 of
  ``raw_content``: ``system-prompt`` pieces ``system:<hash12>`` (``position`` = the
  instruction's index in ``system``); ``rag`` pieces ``doc:<id>`` for documents a
  retriever span marked (their text is inside a system or message piece);
  ``messages`` pieces whose ``injection_id`` is the message's origin — ``person``
  (this turn's message), ``llm#j`` (an earlier call of this run),
  ``turn<t>:person``/``turn<t>:llm#j`` (an earlier turn of the conversation),
  ``tool#<call id>`` (the tool call whose result it is), ``history#<i>`` (not found)
  — with ``position`` = the index in ``messages`` and ``as_role`` its role; and
  ``tools`` pieces ``tool:<name>``. ``reason`` says the trace does not tell why a
  piece was admitted, and ends ``TRUNCATED by the emitter`` when the emitter cut it.
- ``llm.end`` holds the output text, tool calls, finish reason (``stop_reason``) and
  usage.

May import: footprint, recorder.write, recorder.store, recorder.otel, the OpenTelemetry
SDK and proto packages, grpc, orjson.
"""

from __future__ import annotations

from recorder.ingest._files import ingest_files, remap
from recorder.ingest._intake import BatchReport, Intake
from recorder.ingest._mapper import UNKNOWN, map_trace, run_id_for
from recorder.ingest._otlp_json import decode_json
from recorder.ingest._otlp_proto import decode_logs, decode_traces
from recorder.ingest._processor import SpanProcessor
from recorder.ingest._receiver import MAX_BODY, Receiver
from recorder.ingest._redact import store_redactor
from recorder.ingest._spans import Batch, ForeignLog, ForeignSpan, SpanEvent

__all__ = [
    "MAX_BODY",
    "UNKNOWN",
    "Batch",
    "BatchReport",
    "ForeignLog",
    "ForeignSpan",
    "Intake",
    "Receiver",
    "SpanEvent",
    "SpanProcessor",
    "decode_json",
    "decode_logs",
    "decode_traces",
    "ingest_files",
    "map_trace",
    "remap",
    "run_id_for",
    "store_redactor",
]
