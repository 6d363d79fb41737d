"""One intake behind all three doors: a batch is stored raw, decoded, grouped by trace,
and a trace is mapped to a run once its root span has arrived (or at ``flush``)."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from footprint._errors import ConfigError
from footprint.events import ContextInjected, EventBase
from recorder.ingest._bounded import BadBody, inflate
from recorder.ingest._conversations import Conversations
from recorder.ingest._dialects import kind_of
from recorder.ingest._later import Later
from recorder.ingest._mapper import Conversation, MappedRun, map_trace
from recorder.ingest._otlp_json import decode_json
from recorder.ingest._otlp_proto import BadPayload, decode_proto
from recorder.ingest._pending import Pending, stored_traces
from recorder.ingest._raw import (
    Format,
    Signal,
    note_writer,
    quarantine,
    raw_batches,
    raw_name,
    settle,
    write_raw,
)
from recorder.ingest._redact import redact_body, scrubber
from recorder.ingest._spans import Batch, ForeignLog, ForeignSpan
from recorder.ingest._workdir import claim, release, unread, workdir
from recorder.write._parquet_sink import ParquetSink, seal_seconds
from recorder.write._recorder import Recorder
from recorder.write._sink import Processor

__all__ = ["BatchReport", "Intake", "decode_body", "merge_reports"]

_log = logging.getLogger("recorder")


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchReport:
    """What one batch brought: spans and log records read, runs mapped, and every problem
    counted by reason (a bad item never loses the rest of its batch)."""

    spans: int = 0
    logs: int = 0
    runs: tuple[str, ...] = ()
    problems: Mapping[str, int] = field(default_factory=dict)

    def line(self) -> str:
        text = f"{self.spans} spans, {self.logs} log records, {len(self.runs)} runs mapped"
        if self.problems:
            text += "; " + ", ".join(f"{n} {why}" for why, n in sorted(self.problems.items()))
        return text


def merge_reports(reports: Iterable[BatchReport]) -> BatchReport:
    """Reports of many batches as one."""
    spans = logs = 0
    runs: list[str] = []
    problems: Counter[str] = Counter()
    for r in reports:
        spans, logs = spans + r.spans, logs + r.logs
        runs += r.runs
        problems.update(r.problems)
    return BatchReport(spans=spans, logs=logs, runs=tuple(runs), problems=dict(problems))


def decode_body(body: bytes, signal: Signal, fmt: Format) -> Batch:
    """A raw body as a :class:`Batch`; a body that does not parse is one counted problem."""
    if fmt == "pb":
        try:
            return decode_proto(body, signal)
        except BadPayload:
            return Batch(problems={"corrupt batch (protobuf did not parse)": 1})
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return Batch(problems={"corrupt batch (JSON did not parse)": 1})
    try:
        return decode_json(doc)
    except (TypeError, ValueError, OverflowError) as exc:  # a value of the wrong kind
        return Batch(problems={f"corrupt batch (OTLP/JSON: {type(exc).__name__})": 1})


def _conversation_key(spans: Iterable[ForeignSpan]) -> str | None:
    for s in spans:
        key = s.attributes.get("gen_ai.conversation.id") or s.attributes.get("session.id")
        if key:
            return str(key)
    return None


def _has_history(run: MappedRun | None) -> bool:
    """Whether the run's requests hold messages of no call it made: earlier turns."""
    return run is not None and any(
        type(e) is ContextInjected and (e.injection_id or "").startswith("history#")
        for e in run.events)


@dataclass(slots=True)
class _Trace:
    spans: list[ForeignSpan] = field(default_factory=list)
    span_ids: set[str] = field(default_factory=set)
    logs: list[ForeignLog] = field(default_factory=list)
    rooted: bool = False
    seen: float = field(default_factory=time.monotonic)
    raws: list[Path] = field(default_factory=list)


_DRAIN_S = 0.5
"""How long mapped events wait for the store writer (unless 8192 are waiting, or a flush):
a few batches' runs go down as one Arrow batch, one chain pass and one sealed file instead
of one each per 50 ms (the raw batch is already stored, so a crash loses nothing a remap
cannot rebuild)."""

_KEEP_MAPPED = 100_000
"""Trace ids remembered as mapped (the store's most recent runs and this intake's own), so
a span of a trace whose run is already stored is skipped, not stored twice; older ones
are forgotten."""

_BACKLOG = 2048
"""Mapped events waiting for the store writer at most: past it, taking a batch waits for
the writer (back-pressure; the exporter waits for its 200), so memory stays flat however
far the senders run ahead (the recorder's default, a million events, let a receiver grow
by hundreds of MB). One export batch of the recorder: while the writer converts one, the
next waits. Measured on a receiver taking 30,000 10-turn conversation traces: 8,192
waiting peaked at ~254 MB (1.29 x its peak over 1,000 traces), 2,048 at ~217 MB (1.17 to
1.20 x), for 4-7% fewer spans a second; 32,768 added ~10 MB more and no speed."""

_SETTLE_S = 1.0
"""How often the raw batches whose runs are all mapped are settled (after a flush of the
recorder: their runs are written first)."""

SEAL_AFTER_S = 60.0
"""How old a file of runs that have all ended gets before it is sealed and uploaded, for a
store on object storage (``ParquetSink(seal_after_s=)``): nothing merges a bucket's files,
and sealing each export on its own left a file per export (1,003 objects for 10,000 runs
sent 0.6 s apart), which every later read lists and binds. A local store seals at once
(its writers merge small files)."""

_REFRESH_S = 30.0
_WORKER_REFRESH_S = 1.0
"""At most how often the store is read again for a turn whose history the index does not
know: a receiver of its own, or a worker of ``receive --workers`` (whose peers write the
conversation's other turns: read sooner, so a turn finds the one a peer wrote a moment ago)."""

AGAIN = ("spans of traces already in the store (skipped: a trace is mapped once; "
         "`footprint ingest --remap` maps it again with every span received)")
KEPT = ("spans of runs a compaction merged (kept as stored: a remap cannot drop them, "
        "so it does not map them again)")
DUPLICATE = "duplicate spans (the same span id twice in one trace; kept once)"


def _check_options(*, keep_raw: object, durable: object, idle_s: object,
                   processors: Sequence[object], worker: object, seal_after_s: object) -> None:
    """Refuse a bad worker index, processor, flag, idle or seal time, naming the option."""
    if seal_after_s is not None:  # None: SEAL_AFTER_S on object storage, 0 on a local store
        seal_seconds(seal_after_s, "Intake")
    if worker is not None and (type(worker) is not int or worker < 0):
        raise ConfigError(f"Intake(worker={worker!r}): the index (0, 1, …) of this "
                          "receive worker, or None for a receiver of its own")
    if not all(callable(p) for p in processors):
        raise ConfigError(f"Intake(processors={processors!r}): a list of processors, "
                          "e.g. [Redactor()] (each takes an event, returns it or Drop)")
    if not isinstance(keep_raw, bool) or not isinstance(durable, bool):
        raise ConfigError(f"Intake(keep_raw={keep_raw!r}, durable={durable!r}): both "
                          "must be True or False")
    if not isinstance(idle_s, int | float) or not idle_s > 0:
        raise ConfigError(f"Intake(idle_s={idle_s!r}): seconds a trace without its root "
                          "waits before it is mapped anyway; a positive number")


class Intake:
    """Takes OTLP batches into a store: ``take`` (wire bodies) or ``add`` (decoded batches).

    Thread-safe. A trace is mapped when its root span arrives, or when it has waited
    ``idle_s`` seconds without one (at the next batch), or at :meth:`flush`. Mapped runs
    are written through a ``Recorder`` and ``ParquetSink`` like
    native runs (chained, crash-safe); ``keep_raw=False`` skips the raw partition and
    ``defer=True`` maps only at :meth:`flush`, so log records that came after their trace's
    root are joined too (a remap does both). ``processors`` are a native recording's
    (``[Redactor()]``): they act on the mapped events before they are written, and every
    redactor's patterns on each raw batch before it is stored. ``store`` may be a storage
    URI (``s3://bucket/prefix``): the intake's own state then lives in a local working
    directory (``recorder.ingest._workdir``), runs go up through ``ParquetSink(uri)``,
    each file sealed once ``seal_after_s`` old (default :data:`SEAL_AFTER_S` there).
    """

    def __init__(self, store: str | Path | None = None, *, keep_raw: bool = True,
                 durable: bool = False, idle_s: float = 300.0, defer: bool = False,
                 processors: Sequence[Processor] = (), worker: int | None = None,
                 seal_after_s: float | None = None) -> None:
        _check_options(keep_raw=keep_raw, durable=durable, idle_s=idle_s,
                       processors=processors, worker=worker, seal_after_s=seal_after_s)
        self.idle_s, self.defer, self.worker = float(idle_s), bool(defer), worker
        self._work = workdir(store)
        self.seal_after_s = float(seal_after_s if seal_after_s is not None else
                                  SEAL_AFTER_S if self._work.uri is not None else 0.0)
        self.store = self._work.root  # the raw batches' store: for a URI, the working dir
        if self.store.exists() and not self.store.is_dir():
            raise ConfigError(f"the store {str(self.store)!r} is a file, not a directory; "
                              "pass a store directory (or a new path) as --store")
        self.keep_raw, self.durable = keep_raw, durable
        self.processors = tuple(processors)
        self.scrub = scrubber(self.processors)
        self._lock = threading.Lock()
        """Guards the traces and the mapping (held while a batch is mapped)."""
        self._raw_lock = threading.Lock()
        """Guards the pending raw batches (taken inside ``_lock`` where both are needed, never
        the other way round), so a request stores its raw batch while a batch is mapped."""
        self._count_lock = threading.Lock()
        self._traces: dict[str, _Trace] = {}
        self._held: frozenset[str] = frozenset()
        self._pending = Pending()
        self._settle_lock = threading.Lock()
        self._stop = threading.Event()
        self._settler: threading.Thread | None = None
        self._conversations = Conversations(
            refresh_s=_REFRESH_S if worker is None else _WORKER_REFRESH_S)
        self._indexed = False
        self._later: Later[BatchReport] = Later(lambda batch, raw: self.add(batch, raw=raw))
        self._recorder: Recorder | None = None
        self._sink: ParquetSink | None = None
        self.totals: Counter[str] = Counter()
        self._claim = claim(self._work, worker)
        self._mapped: dict[str, int] = {} if defer else self._stored()
        """trace id -> the last event number of its run in the store (-1: mapped here)"""

    @property
    def uri(self) -> str | None:
        """The store on object storage this intake writes, ``None`` for a local store."""
        return self._work.uri

    def _stored(self) -> dict[str, int]:
        if self._work.uri is not None:
            return self._stored_remote()
        try:
            return stored_traces(self.store, _KEEP_MAPPED) if self.store.is_dir() else {}
        except Exception as exc:  # an unreadable store: traces are mapped, maybe again
            _log.warning("recorder.ingest: the store's runs not read (%s: %s)",
                         type(exc).__name__, exc)
            return {}

    def _stored_remote(self) -> dict[str, int]:
        """What a bucket holds, read once its store writer has started: that seals and
        uploads what killed writers left in the staging store (``ParquetSink``'s adoption),
        so a restart after SIGKILL sees every run written before. A bucket that cannot be
        read stops the start (mapping blind could store a trace twice)."""
        from recorder.write._upload import orphaned

        assert self._work.uri is not None
        self._write([])
        assert self._sink is not None
        try:
            self._sink.force_flush()
            left = orphaned(self.store)
            if left:
                raise OSError(f"{len(left)} sealed files of stopped writers not uploaded, "
                              f"e.g. {str(left[0])!r}")
            try:
                return stored_traces(self._work.uri, _KEEP_MAPPED)
            except ConfigError:  # nothing stored under the prefix yet
                return {}
        except Exception as exc:
            self.close()
            raise unread(self._work, exc) from None

    def take(self, body: bytes, *, signal: Signal, fmt: Format,
             encoding: str | None = None) -> BatchReport:
        """One wire body: un-gzipped, stored raw (with ``durable``: fsynced before this
        returns), decoded, mapped. Never raises on bad input."""
        kept = self._keep(body, signal, fmt, encoding)
        return kept if isinstance(kept, BatchReport) else self.add(kept[0], raw=kept[1])

    def submit(self, body: bytes, *, signal: Signal, fmt: Format, encoding: str | None = None,
               done: Callable[[BatchReport], None] | None = None) -> BatchReport | None:
        """:meth:`take` without waiting for the mapping: once the body is stored raw (with
        ``durable``: fsynced) and decoded it is mapped on the intake's mapping thread, in the
        order taken (``done`` gets the report there); :meth:`flush` and :meth:`close` wait
        for it. A body that does not decode is counted at once and its report returned
        (``None``: it was taken)."""
        kept = self._keep(body, signal, fmt, encoding)
        if isinstance(kept, BatchReport):
            return kept
        batch, raw = kept
        if any(why.startswith("corrupt") for why in batch.problems):
            return self.add(batch, raw=raw)
        self._later.put(batch, raw, done)
        return None

    def _keep(self, body: bytes, signal: Signal, fmt: Format,
              encoding: str | None) -> tuple[Batch, Path | None] | BatchReport:
        """``body`` inflated, scrubbed, stored raw and decoded (with the raw batch it is
        pending as); a body that does not inflate, counted."""
        try:
            plain = inflate(body, encoding)
        except BadBody as exc:
            return self.count(BatchReport(problems={f"corrupt batch ({exc})": 1}))
        if self.scrub is not None:
            plain = redact_body(plain, signal, fmt, self.scrub)
        path = None
        if self.keep_raw:
            with self._raw_lock:
                path = raw_name(self.store, signal, fmt, self.worker)
                self._pending.reserve(path)
            try:
                write_raw(path, plain, durable=self.durable)
            except BaseException:
                with self._raw_lock:
                    self._pending.forget(path)
                raise
            self._start_settler()
        return decode_body(plain, signal, fmt), path

    def add(self, batch: Batch, *, raw: Path | None = None, again: bool = False) -> BatchReport:
        """One decoded batch (``raw``: the pending raw batch it came from; ``again``: a
        batch taken again after a crash, whose traces' runs may be in the store in part)."""
        problems: Counter[str] = Counter(batch.problems)
        with self._lock:
            touched = self._collect(batch, problems, raw, again)
            due = time.monotonic() - self.idle_s
            ready = [] if self.defer else [t for t, trace in self._traces.items()
                                           if trace.rooted or trace.seen < due]
            runs = [r for t in ready for r in self._map(t, problems)]
            if raw is not None:
                with self._raw_lock:
                    self._pending.resolve(raw, {t for t in touched if t in self._traces})
        return self.count(BatchReport(spans=len(batch.spans), logs=len(batch.logs),
                                       runs=tuple(runs), problems=dict(problems)))

    def _collect(self, batch: Batch, problems: Counter[str], raw: Path | None,
                 again: bool) -> set[str]:
        touched: set[str] = set()
        for span in batch.spans:
            if span.trace_id in self._held:
                problems[KEPT] += 1
                continue
            if self._skipped(span.trace_id, again):
                problems[AGAIN] += 1
                continue
            trace = self._trace(span.trace_id, raw, touched)
            if span.span_id in trace.span_ids:
                problems[DUPLICATE] += 1
                continue
            trace.span_ids.add(span.span_id)
            if kind_of(span) == "foreign":
                problems["span in no GenAI dialect"] += 1
            trace.spans.append(span)
            trace.seen = time.monotonic()
            trace.rooted = trace.rooted or span.parent_id is None
        for log in batch.logs:
            if log.trace_id is None:
                problems["log record without a trace id"] += 1
                continue
            self._trace(log.trace_id, raw, touched).logs.append(log)
        return touched

    def hold(self, traces: frozenset[str]) -> None:
        """Skip these traces from now on: their runs are stored where a remap cannot drop
        them (``recorder.ingest._forget``)."""
        self._held = frozenset(traces)

    def _skipped(self, trace_id: str, again: bool) -> bool:
        """A span of a trace already mapped is skipped — unless taken ``again`` after a
        crash while the store holds the trace's run (maybe in part: its events were being
        written): it is mapped again and only the events the store lacks are written."""
        if trace_id not in self._mapped:
            return False
        return not (again and (trace_id in self._traces or self._mapped[trace_id] >= 0))

    def _trace(self, trace_id: str, raw: Path | None, touched: set[str]) -> _Trace:
        trace = self._traces.get(trace_id)
        if trace is None:
            trace = self._traces[trace_id] = _Trace()
        if raw is not None and trace_id not in touched:
            touched.add(trace_id)
            trace.raws.append(raw)
        return trace

    def _map(self, trace_id: str, problems: Counter[str]) -> list[str]:
        trace = self._traces.pop(trace_id)
        stored = self._mapped.get(trace_id, -1)
        self._mapped[trace_id] = -1
        if len(self._mapped) > _KEEP_MAPPED:
            del self._mapped[next(iter(self._mapped))]
        with self._raw_lock:
            self._pending.mapped(trace_id, trace.raws)
        key = _conversation_key(trace.spans)
        conv = self._conversation(key)
        known = conv.turns if conv is not None and conv is self._conversations.get(key or "") \
            else -1
        try:
            run = map_trace(trace.spans, trace.logs, conv)
            if key is not None:
                run, conv = self._with_earlier_turns(trace, key, run, conv, known)
        except Exception as exc:  # a mapper bug costs this trace, never the receiver
            problems[f"trace not mapped ({type(exc).__name__}: {exc})"] += 1
            return []
        if run is None:
            problems["trace with no model or tool call"] += 1
            return []
        problems.update({"chat span with no content": run.empty_chats} if run.empty_chats
                        else {})
        rest = [e for e in run.events if e.seq > stored]
        if not rest:  # taken again after a crash, and the store holds all of it
            return []
        if stored >= 0:
            self._resume(run.run_id)
        self._write(rest)
        return [run.run_id]

    def _conversation(self, key: str | None) -> Conversation | None:
        """The conversation ``key`` as this intake knows it (the index is read from the
        store once, at the first trace of any conversation); a new one when unknown."""
        if key is None:
            return None
        if not self._indexed and not self.defer and (self.uri or self.store.is_dir()):
            self._indexed = True
            try:
                self._conversations.load(self._work.source)
            except Exception as exc:  # an unreadable store costs the origins, never a trace
                _log.warning("recorder.ingest: conversations not read from the store "
                             "(%s: %s)", type(exc).__name__, exc)
        held = self._conversations.get(key)
        return held if held is not None else Conversation()

    def _with_earlier_turns(self, trace: _Trace, key: str, run: MappedRun | None,
                            conv: Conversation | None, known: int) -> tuple[
                                MappedRun | None, Conversation | None]:
        """A turn whose history holds messages the index does not know (``known``: the
        turns the index held of it, -1 none): another process wrote its earlier turns (a
        restart, another worker of ``receive --workers``), or it fell out of the index. The
        store is read again (at most once per ``refresh_s``) and, when it knows more of the
        conversation, the trace mapped after those turns, so its turn and its history's
        origins are the ones a single intake gives."""
        assert conv is not None
        if not self.defer and _has_history(run):
            if known >= 0:
                self._conversations.put(key, conv)  # the index's own, already a turn on
            earlier = self._conversations.earlier(self._work.source, key)
            if earlier is not None and earlier is not conv and earlier.turns > known:
                return map_trace(trace.spans, trace.logs, earlier), earlier
        self._conversations.put(key, conv)
        return run, conv

    def _resume(self, run_id: str) -> None:
        """The rest of a run a killed receiver wrote in part continues its chain."""
        from recorder.store._catalog import open_store
        from recorder.store._verify import ChainTail, chain_tail

        try:
            with open_store(self._work.source) as s:
                tail = chain_tail(s, run_id)
        except Exception as exc:  # the rest is written unlinked; verify names the break
            _log.warning("recorder.ingest: run %s not resumed (%s: %s)", run_id,
                         type(exc).__name__, exc)
            return
        if isinstance(tail, ChainTail):
            self._write([])
            assert self._sink is not None
            self._sink.resume_chain(run_id, check=tail.check, stream=tail.stream,
                                    records=tail.records)

    def _write(self, events: list[EventBase]) -> None:
        if self._recorder is None:
            sink = self._sink = ParquetSink(self._work.source,
                                            seal_after_s=self.seal_after_s)
            note_writer(self.store, sink.writer_id)
            self._recorder = Recorder(sinks=[sink], processors=self.processors,
                                      capacity=_BACKLOG, on_full="block",
                                      interval_s=_DRAIN_S)
        if events:
            self._recorder.emit_all(events)

    @property
    def conversation_reads(self) -> int:
        """How many times this intake read conversations back from the store (once at the
        first conversation's trace; again only for a turn of one it does not hold)."""
        return self._conversations.loads

    def count(self, report: BatchReport) -> BatchReport:
        with self._count_lock:
            self.totals.update({"spans": report.spans, "logs": report.logs,
                                "runs": len(report.runs)})
            self.totals.update(report.problems)
        return report

    def flush(self) -> BatchReport:
        """Map every trace still waiting for its root, write everything down, and settle
        the raw batches whose runs are all written."""
        self._later.drain()
        problems: Counter[str] = Counter()
        with self._lock:
            runs = [r for t in list(self._traces) for r in self._map(t, problems)]
        self._settle()
        return self.count(BatchReport(runs=tuple(runs), problems=dict(problems)))

    def _settle(self) -> None:
        """Flush the recorder, then settle the raw batches that were ready before it."""
        with self._settle_lock:
            with self._lock, self._raw_lock:  # never between a trace's mapped and written
                ready = self._pending.ready()
                recorder = self._recorder
            if recorder is not None and not recorder.flush():
                return  # maybe not written (a sink failed, or a timeout): the batches stay
                # pending, and the next start maps them again
            for path in ready:
                settle(path)

    def _start_settler(self) -> None:
        with self._raw_lock:
            if self._settler is None:
                self._settler = threading.Thread(target=self._settling, daemon=True,
                                                 name="footprint-intake-settle")
                self._settler.start()

    def _settling(self) -> None:
        while not self._stop.wait(_SETTLE_S):
            try:
                self._settle()
            except Exception as exc:  # a batch left pending is mapped again at the next start
                _log.warning("recorder.ingest: raw batches not settled (%s: %s)",
                             type(exc).__name__, exc)

    @property
    def pending(self) -> int:
        """Raw batches of this intake whose runs are not all written yet."""
        with self._raw_lock:
            return len(self._pending)

    def recover(self) -> BatchReport:
        """Map every pending raw batch again (a receiver stopped before their runs were
        written: killed, or a second Ctrl-C); traces whose runs the store holds whole are
        skipped, the rest of a run it holds in part is written. A batch that no longer
        decodes is quarantined."""
        reports = []
        for raw in raw_batches(self.store, pending=True, worker=self.worker):
            with self._raw_lock:
                self._pending.reserve(raw.path)
            self._start_settler()
            batch = decode_body(raw.read(), raw.signal, raw.format)
            if any(why.startswith("corrupt") for why in batch.problems):
                moved = quarantine(self.store, raw)
                with self._raw_lock:
                    self._pending.forget(raw.path)
                reports.append(self.count(BatchReport(problems={
                    f"corrupt raw batch ({raw.path.name} did not decode: moved to "
                    f"{moved.parent})": 1})))
                continue
            reports.append(self.add(batch, raw=raw.path, again=True))
        return merge_reports(reports)

    def close(self) -> BatchReport:
        self._later.close()
        report = self.flush()
        self._stop.set()
        if self._settler is not None:
            self._settler.join()
        self._settle()
        with self._lock:
            if self._recorder is not None:
                self._recorder.close()
                self._recorder = None
            release(self._claim)
            self._claim = None
        return report

    def __enter__(self) -> Intake:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
