"""The writer's side of the chain heads: canonical bytes spelled columnwise, then hashed.

Runs on the store writer's file thread. Every step is an Arrow compute
kernel or a large ``hashlib`` update, and both release the GIL, so the
heads cost the engine's process little besides a second core's time.
The bytes equal the reference spellings in ``recorder.write._chain`` (a
property test holds them to it).
"""

from __future__ import annotations

import array
import bisect
import functools
import hashlib
from collections.abc import Iterable
from json.encoder import encode_basestring
from typing import Any

import pyarrow as pa
import pyarrow.acero as acero
import pyarrow.compute as pc

from footprint.events import TERMINAL_TYPES
from recorder.write._chain import ENVELOPE_ORDER, keyed_head, stretches

__all__ = ["RunHeads", "envelope_column", "framed_records"]

_ESCAPED = r'["\\\x00-\x1f]'
"""What a JSON string must escape: a quote, a backslash, a control character."""
_WRAP = len(b'{"envelope":') + len(b',"payload":') + len(b"}")
_TERMINAL = pa.array(sorted(TERMINAL_TYPES), pa.string())
_DENSE_UP_TO = 1024
"""A run's part of one batch up to this many rows gets a head every ``every`` records."""


def _spelled(column: pa.Array) -> pa.Array | str:
    """One envelope column as JSON values (``null`` for a missing value)."""
    if column.null_count == len(column):
        return "null"
    if pa.types.is_integer(column.type):
        text = pc.cast(column, pa.string())
    elif pc.any(pc.match_substring_regex(column, _ESCAPED)).as_py():
        text = pa.array([None if v is None else encode_basestring(v)
                         for v in column.to_pylist()], pa.string())
    else:
        text = pc.binary_join_element_wise('"', column, '"', "")
    return pc.fill_null(text, "null") if column.null_count else text


def envelope_column(batch: pa.RecordBatch) -> pa.Array:
    """``E`` of every row, spelled from the stored envelope columns."""
    parts = [_spelled(batch.column(name)) for name in ENVELOPE_ORDER]
    inner = pc.binary_join_element_wise(*parts, ",")
    return pc.binary_join_element_wise("[", inner, "]", "")


def _framed_eagerly(batch: pa.RecordBatch) -> pa.Array:
    """:func:`framed_records` kernel by kernel, escaping text in Python where needed."""
    envelope = envelope_column(batch)
    payload = batch.column("payload")
    size = pc.add(pc.add(pc.binary_length(envelope), pc.binary_length(payload)), _WRAP)
    return pc.binary_join_element_wise(
        pc.cast(size, pa.string()), ':{"envelope":', envelope, ',"payload":', payload, "},", "")


def _call(name: str, *args: object) -> pc.Expression:
    return pc.Expression._call(
        name, [a if isinstance(a, pc.Expression) else pc.scalar(a) for a in args])


@functools.cache
def _framing(schema: pa.Schema, missing: frozenset[str],
             whole: frozenset[str]) -> tuple[acero.Declaration, acero.Declaration]:
    """Two projections: ``E`` and ``P``; then the frames. ``missing`` names the envelope
    columns with no value in the table (spelled as one literal ``null``), ``whole`` those
    with a value in every row (no ``null`` to fill in).

    Run as one Acero plan, the whole spelling is one call that releases the
    GIL once, instead of forty kernels each taking it back.
    """
    parts: list[pc.Expression] = []
    for name in ENVELOPE_ORDER:
        field = pc.field(name)
        if name in missing:
            parts.append(pc.scalar("null"))
            continue
        text = (field.cast(pa.string()) if pa.types.is_integer(schema.field(name).type)
                else _call("binary_join_element_wise", '"', field, '"', ""))
        parts.append(text if name in whole else pc.coalesce(text, pc.scalar("null")))
    envelope = _call("binary_join_element_wise", "[",
                     _call("binary_join_element_wise", *parts, ","), "]", "")
    first = acero.ProjectNodeOptions([envelope, pc.field("payload")], ["e", "p"])
    e, p = pc.field("e"), pc.field("p")
    size = _call("add", _call("add", _call("binary_length", e), _call("binary_length", p)),
                 _WRAP)
    framed = _call("binary_join_element_wise", size.cast(pa.string()), ':{"envelope":', e,
                   ',"payload":', p, "},", "")
    second = acero.ProjectNodeOptions([framed], ["frame"])
    return acero.Declaration("project", first), acero.Declaration("project", second)


def _may_need_escapes(columns: list[pa.ChunkedArray]) -> bool:
    """Whether the text columns may hold a quote, a backslash or a control character.

    One regex search over each chunk's whole character buffer, all in one
    kernel call (the file thread retakes the GIL once), not one per value.
    Those characters are single bytes in UTF-8 and never part of another
    character's bytes, so a buffer without them needs no escape; bytes
    outside the chunk's own values can only make the answer ``True`` (then
    the careful path runs).
    """
    buffers = [data for column in columns for chunk in column.chunks
               if (data := chunk.buffers()[2]) is not None and data.size]
    if not buffers:
        return False
    wholes = [pa.Array.from_buffers(pa.large_binary(), 1, [
        None, pa.py_buffer(array.array("q", (0, data.size))), data]) for data in buffers]
    found = pc.match_substring_regex(pa.chunked_array(wholes, pa.large_binary()), _ESCAPED)
    return any(chunk.true_count for chunk in found.chunks)


def framed_records(table: pa.Table) -> pa.Array:
    """Every row as its netstring ``<len(C)>:<C>,`` with ``C`` its canonical bytes."""
    missing, whole, texts = set(), set(), []
    for name in ENVELOPE_ORDER:
        column = table.column(name)
        if column.null_count == len(column):
            missing.add(name)
            continue
        if not column.null_count:
            whole.add(name)
        if pa.types.is_string(column.type):
            texts.append(column)
    if _may_need_escapes(texts):
        # rare: a quote, a backslash or a control character in the envelope text
        return _framed_eagerly(table.combine_chunks().to_batches()[0])
    first, second = _framing(table.schema, frozenset(missing), frozenset(whole))
    source = acero.Declaration("table_source", acero.TableSourceNodeOptions(table))
    out = acero.Declaration.from_sequence([source, first, second]).to_table(use_threads=False)
    frames = out.column("frame")
    return frames.chunks[0] if frames.num_chunks == 1 else frames.combine_chunks()


def _spans(runs: list[str]) -> tuple[list[int] | None, list[tuple[str, int, int]]]:
    """The rows grouped by run and each run's ``(run_id, start, end)`` in that grouping.

    The order is ``None`` when every run is one stretch already (one run, or
    runs one after another); otherwise a stable sort by run id.
    """
    if runs.count(runs[0]) == len(runs):
        return None, [(runs[0], 0, len(runs))]
    spans = stretches(runs)
    if len({run for run, _, _ in spans}) == len(spans):
        return None, spans
    order = sorted(range(len(runs)), key=runs.__getitem__)
    return order, stretches(list(map(runs.__getitem__, order)))


class RunHeads:
    """Each run's running SHA-256 over its framed records; :meth:`link` returns new heads.

    Used by one thread (the store writer's file thread) in export order.
    Besides the head after each batch, a head is kept after every ``every``
    records of a run, so ``verify`` can narrow an edited envelope value down
    to that many records. A run that has ended keeps its stream among the ``keep_ended`` most recent
    ended runs (a straggler event still links on), then is forgotten, so a
    long-lived writer's memory does not grow with every run it ever saw.
    """

    def __init__(self, *, every: int = 64, keep_ended: int = 1024,
                 key: bytes | None = None) -> None:
        self._key = key
        """The chain key: heads are stored as ``HMAC-SHA256(key, digest)`` (``_chain``)."""
        self._streams: dict[str, Any] = {}
        self._counts: dict[str, int] = {}
        self._every = every
        self._ended: dict[str, None] = {}
        self._keep_ended = keep_ended

    def link(self, table: pa.Table, runs: list[str], last_seqs: dict[str, int],
             ended: Iterable[str] = ()) -> list[tuple[str, int, bytes]]:
        """Feed ``table`` (rows in emit order; ``runs`` their run ids) into the heads.

        Returns ``(run_id, last_seq, head)`` after each run's last row here (its
        seq from ``last_seqs``) and after every ``every``-th record of a run:
        the digest of the run's records up to that seq.
        ``ended`` names the runs whose terminal event is in this table.
        """
        ended = list(ended)
        heads = self._link(table, runs, last_seqs, set(ended))
        for run in ended:
            self._ended.pop(run, None)
            self._ended[run] = None
        while len(self._ended) > self._keep_ended:
            oldest = next(iter(self._ended))
            del self._ended[oldest]
            self._streams.pop(oldest, None)
            self._counts.pop(oldest, None)
        return heads

    def resume(self, run_id: str, stream: Any, records: int) -> None:
        """Continue ``run_id``'s chain from a stream taken over its stored records
        (``records`` of them), so a record appended after the run ended links on."""
        self._streams[run_id] = stream.copy()
        self._counts[run_id] = records
        self._ended.pop(run_id, None)

    def _cuts(self, start: int, end: int, done: int, ends: list[int]) -> list[int]:
        """Where heads fall in rows ``start..end`` of a run that has ``done`` records before:
        always after the batch's last row and right after a terminal event (``ends``: their
        rows), and after every ``every``-th record when the run's part of the batch is
        small (each head retakes the GIL, which a batch at full throughput cannot spare; a
        big batch is recorded too fast to need them)."""
        if end - start > _DENSE_UP_TO:
            cuts = {end}
        else:
            cuts = {*range(start + self._every - done % self._every, end, self._every), end}
        return sorted(cuts.union(e + 1 for e in ends))

    @staticmethod
    def _terminal_rows(table: pa.Table, order: list[int] | None) -> list[int]:
        """The positions (in the run-grouped rows) of terminal events, one pass a batch."""
        types = table.column("type")
        if order is not None:
            types = types.take(pa.array(order, pa.int64()))
        mask = pc.is_in(types, value_set=_TERMINAL)
        return list(pc.indices_nonzero(mask).to_pylist())

    def _link(self, table: pa.Table, runs: list[str], last_seqs: dict[str, int],
              ended: set[str]) -> list[tuple[str, int, bytes]]:
        if not runs:
            return []
        frames = framed_records(table)
        order, spans = _spans(runs)
        if order is not None:
            frames = frames.take(pa.array(order, pa.int32()))
        ends = memoryview(frames.buffers()[1]).cast("i")[frames.offset:]
        data = frames.buffers()[2]
        seqs = table.column("seq")
        terminals = self._terminal_rows(table, order) if ended else []
        heads = []
        for run, start, end in spans:
            stream = self._streams.get(run)
            if stream is None:
                stream = self._streams[run] = hashlib.sha256()
            self._ended.pop(run, None)  # events after its end: it is open again
            done = self._counts.get(run, 0)
            self._counts[run] = done + end - start
            terminal = (terminals[bisect.bisect_left(terminals, start):
                                  bisect.bisect_left(terminals, end)] if run in ended else [])
            at = start
            for cut in self._cuts(start, end, done, terminal):
                stream.update(data.slice(ends[at], ends[cut] - ends[at]))
                row = cut - 1 if order is None else order[cut - 1]
                seq = last_seqs[run] if cut == end else int(seqs[row].as_py())
                heads.append((run, seq, keyed_head(self._key, stream.copy().digest())))
                at = cut
        return heads
