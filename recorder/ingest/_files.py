"""Files into a store: OTLP/JSON lines (as the Collector's file exporter writes them), one
OTLP/JSON document, and OTLP protobuf files, each maybe gzipped; and ``remap``, which maps
every stored raw batch again."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from recorder.ingest._forget import forget_mapping
from recorder.ingest._intake import BatchReport, Intake, decode_body, merge_reports
from recorder.ingest._otlp_proto import BadPayload, decode_logs, decode_traces
from recorder.ingest._raw import (
    RawBatch,
    quarantine,
    raw_batches,
    replace_raw,
    settle,
)
from recorder.ingest._redact import redact_body
from recorder.ingest._spans import Batch
from recorder.ingest._workdir import remote_refused, workdir
from recorder.write._sink import Processor

__all__ = ["ingest_files", "remap"]


def _take_json(intake: Intake, doc: Any, body: bytes) -> BatchReport:
    logs = isinstance(doc, dict) and "resourceLogs" in doc
    return intake.take(body, signal="logs" if logs else "traces", fmt="json")


def _lines(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:5])) + (", …" if len(numbers) > 5 else "")
    return f"line {shown}" if len(numbers) == 1 else f"lines {shown}"


def _json_lines(intake: Intake, data: bytes, name: str,
                tick: Callable[[int], None]) -> list[BatchReport]:
    """OTLP/JSON lines (the Collector's file exporter), or one OTLP/JSON document written
    over many lines; bad lines are named by number, a torn last line as such. ``tick``
    gets the bytes read so far after each line."""
    lines = data.splitlines()
    out: list[BatchReport] = []
    bad: list[int] = []
    read = 0
    for n, line in enumerate(lines, 1):
        read += len(line) + 1
        tick(read)
        if not line.strip():
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            if not out and not bad:  # the first line: maybe one document over many lines
                try:
                    return [_take_json(intake, orjson.loads(data), data)]
                except orjson.JSONDecodeError:
                    pass
            bad.append(n)
            continue
        out.append(_take_json(intake, doc, line))
    if bad == [len(lines)] and not data.endswith(b"\n"):
        why = (f"cut-off line ({name} line {bad[0]}: is the file still being written? "
               "ingest it again when it is whole)")
        out.append(BatchReport(problems={why: 1}))
    elif bad:
        out.append(BatchReport(problems={
            f"corrupt line (JSON did not parse: {name} {_lines(bad)})": len(bad)}))
    return out


def _protobuf(intake: Intake, data: bytes, name: str) -> BatchReport:
    try:
        traces = decode_traces(data)
    except BadPayload:
        traces = None
    if traces is not None and (traces.spans or traces.problems):
        return intake.take(data, signal="traces", fmt="pb")
    try:
        decode_logs(data)
    except BadPayload:
        return BatchReport(problems={
            f"corrupt file ({name}: neither OTLP/JSON nor OTLP protobuf)": 1})
    return intake.take(data, signal="logs", fmt="pb")


_GZIP, _ZSTD = b"\x1f\x8b", b"\x28\xb5\x2f\xfd"


def _unpacked(data: bytes, name: str) -> bytes | str:
    """The file's bytes, un-gzipped when gzipped; a problem (text) when they cannot be."""
    if data.startswith(_GZIP):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            return f"corrupt file ({name}: gzip did not decompress: {exc})"
    if data.startswith(_ZSTD):
        return f"zstd-compressed file ({name}: decompress it first with zstd -d, then ingest that)"
    return data


Progress = Callable[[float, Mapping[str, int]], None]
"""``(share of the input read, 0..1, the intake's totals so far)``."""


class _Ticker:
    """Tells ``progress`` how far through all the files the intake is."""

    def __init__(self, intake: Intake, sizes: list[int], progress: Progress | None) -> None:
        self.intake, self.progress = intake, progress
        self.total, self.before, self.size, self.length = max(sum(sizes), 1), 0, 0, 1

    def file(self, size: int, length: int) -> None:
        """The next file: ``size`` bytes on disk, ``length`` once unpacked."""
        self.before += self.size
        self.size, self.length = size, max(length, 1)

    def __call__(self, read: int) -> None:
        if self.progress is not None:
            done = self.before + self.size * min(read / self.length, 1.0)
            self.progress(done / self.total, self.intake.totals)


def ingest_files(paths: Iterable[str | Path], store: str | Path | None, *,
                 processors: Sequence[Processor] = (),
                 progress: Progress | None = None) -> BatchReport:
    """Every file into ``store`` (raw first, then mapped); one report for all of them. A
    gzipped file is read un-gzipped; a problem names its file. ``processors``: as
    :class:`Intake`'s (redaction); ``progress`` is told after every line or file."""
    files = [Path(p) for p in paths]
    sizes = [f.stat().st_size for f in files]
    reports = []
    with Intake(store, processors=processors) as intake:
        tick = _Ticker(intake, sizes, progress)
        for path, size in zip(files, sizes, strict=True):
            data = _unpacked(path.read_bytes(), str(path))
            tick.file(size, len(data))
            if isinstance(data, str):
                reports.append(BatchReport(problems={data: 1}))
            elif data.lstrip()[:1] == b"{":
                reports += _json_lines(intake, data, str(path), tick)
            else:
                reports.append(_protobuf(intake, data, str(path)))
            tick(len(data))
        reports.append(intake.flush())
    return merge_reports(reports)


def _remap_one(intake: Intake, root: Path, raw: RawBatch) -> BatchReport:
    """One raw batch mapped again; one that does not decode is named and quarantined."""
    body = raw.read()
    if intake.scrub is not None:  # redaction turned on later: the raw batch is redacted too
        clean = redact_body(body, raw.signal, raw.format, intake.scrub)
        if clean != body:
            replace_raw(raw, clean)
            body = clean
    batch = decode_body(body, raw.signal, raw.format)
    corrupt = sum(n for why, n in batch.problems.items() if why.startswith("corrupt"))
    if not corrupt:
        return intake.add(batch)
    moved = quarantine(root, raw)
    return intake.add(Batch(spans=batch.spans, logs=batch.logs, problems={
        f"corrupt raw batch ({raw.path.name} did not decode: moved to {moved.parent}, "
        "no remap reads it again)": 1}))


def remap(store: str | Path, *,
          processors: Sequence[Processor] = ()) -> tuple[int, BatchReport]:
    """Drop the runs earlier mappings wrote and map every raw batch again, in arrival
    order; the number of files dropped and the new mapping's report. Runs a compaction
    merged into files of its own stay as stored and their traces are skipped (counted in
    the report), so no run is stored twice (``recorder.ingest._forget``). With a redactor
    among ``processors``, a raw batch it changes is rewritten redacted."""
    remote_refused(store, "remap", "copy a receiver's working directory's ingest/raw "
                   "into a new local store DIR and remap that")
    root = workdir(store).root  # never a receiver's working directory

    forgotten = forget_mapping(root)
    reports = []
    with Intake(root, keep_raw=False, defer=True, processors=processors) as intake:
        intake.hold(forgotten.kept)
        for raw in raw_batches(root):
            reports.append(_remap_one(intake, root, raw))
        reports.append(intake.flush())
    for raw in raw_batches(root, pending=True):  # every batch is mapped and written now
        settle(raw.path)
    return forgotten.gone, merge_reports(reports)
