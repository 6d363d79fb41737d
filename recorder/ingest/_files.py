"""Files into a store: OTLP/JSON lines (as the Collector's file exporter writes them) and
OTLP protobuf files; and ``remap``, which maps every stored raw batch again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import orjson

from recorder.ingest._intake import BatchReport, Intake, decode_body
from recorder.ingest._otlp_proto import BadPayload, decode_logs, decode_traces
from recorder.ingest._raw import forget_mapping, raw_batches

__all__ = ["ingest_files", "remap"]


def _merge(reports: Iterable[BatchReport]) -> BatchReport:
    spans = logs = 0
    runs: list[str] = []
    problems: Counter[str] = Counter()
    for r in reports:
        spans, logs = spans + r.spans, logs + r.logs
        runs += r.runs
        problems.update(r.problems)
    return BatchReport(spans=spans, logs=logs, runs=tuple(runs), problems=dict(problems))


def _json_lines(intake: Intake, data: bytes) -> list[BatchReport]:
    out = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(BatchReport(problems={"corrupt line (JSON did not parse)": 1}))
            continue
        logs = isinstance(doc, dict) and "resourceLogs" in doc
        out.append(intake.take(line, signal="logs" if logs else "traces", fmt="json"))
    return out


def _protobuf(intake: Intake, data: bytes) -> BatchReport:
    try:
        traces = decode_traces(data)
    except BadPayload:
        traces = None
    if traces is not None and (traces.spans or traces.problems):
        return intake.take(data, signal="traces", fmt="pb")
    try:
        decode_logs(data)
    except BadPayload:
        return BatchReport(problems={"corrupt file (neither OTLP/JSON nor OTLP protobuf)": 1})
    return intake.take(data, signal="logs", fmt="pb")


def ingest_files(paths: Iterable[str | Path], store: str | Path | None) -> BatchReport:
    """Every file into ``store`` (raw first, then mapped); one report for all of them."""
    reports = []
    with Intake(store) as intake:
        for path in paths:
            data = Path(path).read_bytes()
            if data.lstrip()[:1] == b"{":
                reports += _json_lines(intake, data)
            else:
                reports.append(_protobuf(intake, data))
        reports.append(intake.flush())
    return _merge(reports)


def remap(store: str | Path) -> tuple[int, BatchReport]:
    """Drop the runs earlier mappings wrote and map every raw batch again, in arrival
    order; the number of files dropped and the new mapping's report."""
    root = Path(store)
    gone = forget_mapping(root)
    reports = []
    with Intake(root, keep_raw=False, defer=True) as intake:
        for raw in raw_batches(root):
            reports.append(intake.add(decode_body(raw.read(), raw.signal, raw.format)))
        reports.append(intake.flush())
    return gone, _merge(reports)
