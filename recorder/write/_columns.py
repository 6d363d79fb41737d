"""One chunk of events -> one Arrow batch of the ``events`` table, with its row checks.

The envelope is read column by column (integers packed by ``array``, text
converted by Arrow). Payloads and hot columns are converted class by
class (``_extract``), then put back in emit order with one Arrow ``take``.
The row checks are taken last, so a chunk that fails to convert never moves
a run's check; the heads are the file thread's work (``_link``).
"""

from __future__ import annotations

import array
import functools
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from itertools import accumulate
from operator import attrgetter
from typing import Any

import pyarrow as pa

from footprint.events import EventBase
from recorder.write._chain import ENVELOPE_ORDER, extend_checks
from recorder.write._extract import BlobSink, plan_for
from recorder.write._hot import HOT_FIELDS
from recorder.write._schemas import ENVELOPE_TYPES

__all__ = ["ENVELOPE_TYPES", "convert", "offer_gil", "packed_strings", "text_column",
           "yield_gil"]

assert tuple(name for name, _ in ENVELOPE_TYPES) == ENVELOPE_ORDER

_CLASS_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    *((name, pa.string()) for name in HOT_FIELDS), ("admitted_by", pa.int64()))
_PACK = {pa.int32(): "i", pa.int64(): "q"}
_GETTERS = tuple((attrgetter(name), kind) for name, kind in ENVELOPE_TYPES)
_INTS = frozenset({int, bool, type(None)})
_YIELD = 512
"""Events converted between two offers of the GIL to the store's file thread (see below)."""


def offer_gil() -> None:
    """Let a thread waiting for the GIL take it now (``time.sleep(0)``).

    Conversion is pure Python and never lets go of the GIL on its own, so
    the file thread, which needs it for a moment between each of its long
    GIL-free calls, would wait out a whole switch interval (5 ms) every
    time. ``sleep(0)`` releases and retakes it: the file thread's waits
    become microseconds, and the two threads overlap. On Linux it also
    sleeps out the kernel's timer slack (about 50 µs), which is what lets a
    waiting thread on another core wake up and take the GIL first.
    """
    time.sleep(0)


def yield_gil() -> None:
    """:func:`offer_gil` without the sleep: ``os.sched_yield`` releases the GIL and the
    core (0.3 to 0.7 µs, against 60 to 90 µs for ``sleep(0)`` on the development
    machine). A waiting thread that is slow to wake may find the GIL taken again, so
    the store writer uses it only while its file thread keeps up
    (``ParquetSink``); ``time.sleep(0)`` where the platform has no ``sched_yield``."""
    _sched_yield()


_sched_yield: Callable[[], object] = getattr(os, "sched_yield", functools.partial(time.sleep, 0))


def packed_strings(texts: Sequence[bytes]) -> pa.Array:
    """UTF-8 texts as one Arrow string array, copied once, not validated again.

    Every caller passes text it encoded itself (``orjson`` or ``str.encode``),
    so the bytes are valid UTF-8 already.
    """
    ends = array.array("i", [0, *accumulate(map(len, texts))])
    return pa.Array.from_buffers(pa.string(), len(texts),
                                 [None, pa.py_buffer(ends), pa.py_buffer(b"".join(texts))])


def _ints(events: list[EventBase], get: attrgetter[Any], kind: pa.DataType) -> pa.Array:
    """An integer column; packed at C speed unless a value is ``None`` (or not an int).

    A float is refused, never truncated; ``True``/``False`` are stored as 1/0.
    """
    values = list(map(get, events))
    try:
        packed: array.array[int] = array.array(_PACK[kind], values)
    except (TypeError, OverflowError):
        bad = next((v for v in values if type(v) not in _INTS), None)
        if bad is not None:
            raise TypeError(f"envelope value {bad!r} is neither str, int nor None") from None
        return pa.array(values, kind)  # None kept; beyond 64 bits raises OverflowError
    return pa.Array.from_buffers(kind, len(packed), [None, pa.py_buffer(packed)])


def _envelope(events: list[EventBase]) -> tuple[list[pa.Array], list[str]]:
    """The eleven envelope columns, and the run id of every row."""
    columns: list[pa.Array] = []
    runs: list[str] = []
    for (get, kind), name in zip(_GETTERS, ENVELOPE_ORDER, strict=True):
        if kind in _PACK:
            columns.append(_ints(events, get, kind))
            continue
        values = list(map(get, events))
        if name == "run_id":
            runs = values
        columns.append(text_column(values))
    return columns, runs


def text_column(values: list[str | None]) -> pa.Array:
    """A string column; all-``None`` or one repeated text (a run id, a slot, trace ids
    off) is made whole by Arrow instead of converted value by value."""
    first = values[0] if values else None
    if values.count(first) == len(values):
        if first is None:
            return pa.nulls(len(values), pa.string())
        if type(first) is str:
            return pa.repeat(pa.scalar(first, pa.string()), len(values))
    return pa.array(values, pa.string())


def _by_class(events: list[EventBase]) -> tuple[list[EventBase], list[tuple[type, int]],
                                                 list[int] | None]:
    """The events in class order, each class with its count, and the way back.

    ``back[i]`` is where the ``i``-th event sits in class order; ``None``
    when the chunk is all one class (the orders agree).
    """
    classes = list(map(type, events))
    if classes.count(classes[0]) == len(classes):
        return events, [(classes[0], len(events))], None
    groups: dict[type, list[int]] = {}
    for i, cls in enumerate(classes):
        groups.setdefault(cls, []).append(i)
    order = [i for where in groups.values() for i in where]
    back = [0] * len(order)
    deque(map(back.__setitem__, order, range(len(order))), maxlen=0)
    return (list(map(events.__getitem__, order)),
            [(cls, len(where)) for cls, where in groups.items()], back)


def _class_columns(
    ordered: list[EventBase], sizes: list[tuple[type, int]], blobs: BlobSink,
    offer: Callable[[], object],
) -> tuple[list[bytes], list[pa.Array]]:
    """Payload texts and the hot/``admitted_by`` columns, class by class, in class order.

    Each class converts only the columns it has; the others are null runs.
    """
    payloads: list[bytes] = []
    found: list[tuple[int, dict[str, pa.Array]]] = []
    at = 0
    for cls, m in sizes:
        members = ordered if m == len(ordered) else ordered[at:at + m]
        at += m
        plan = plan_for(cls)
        for part in range(0, m, _YIELD):
            offer()
            payloads += plan.payloads(members[part:part + _YIELD] if m > _YIELD else members,
                                      blobs)
        arrays = {name: text_column(values)
                  for name, values in plan.hot_columns(members)}
        admitted = plan.admitted_by(members)
        if admitted is not None:
            arrays["admitted_by"] = pa.array(admitted, pa.int64())
        found.append((m, arrays))
    columns = []
    for name, kind in _CLASS_COLUMNS:
        parts = [arrays.get(name) for _, arrays in found]
        if all(part is None for part in parts):
            columns.append(pa.nulls(len(ordered), kind))
        elif len(parts) == 1:
            columns.append(parts[0])
        else:
            columns.append(pa.concat_arrays(
                [pa.nulls(m, kind) if part is None else part
                 for (m, _), part in zip(found, parts, strict=True)]))
    return payloads, columns


def convert(
    events: list[EventBase], blobs: BlobSink, checks: dict[str, int], schema: pa.Schema,
    offer: Callable[[], object] = offer_gil,
) -> tuple[pa.RecordBatch, list[str]]:
    """One chunk as a batch in ``schema`` (emit order), its row checks continuing ``checks``.

    Also returns each row's run id. Every fallible conversion runs first:
    only a chunk that converted whole moves a run's check. ``offer`` is
    called every few hundred events to let another thread take the GIL.
    """
    offer()
    envelope, runs = _envelope(events)
    offer()
    ordered, sizes, back = _by_class(events)
    payloads, by_class = _class_columns(ordered, sizes, blobs, offer)
    if back is not None:
        payloads = list(map(payloads.__getitem__, back))
        names = [str(i) for i in range(len(by_class))]
        by_class = pa.RecordBatch.from_arrays(by_class, names=names).take(
            pa.array(back, pa.int32())).columns
    offer()
    payload = packed_strings(payloads)
    before, after = extend_checks(checks, runs, payloads)
    return pa.RecordBatch.from_arrays(
        [*envelope, *by_class, payload, _uint32(before), _uint32(after)], schema=schema), runs


def _uint32(values: list[int]) -> pa.Array:
    packed = array.array("I", values)
    return pa.Array.from_buffers(pa.uint32(), len(packed), [None, pa.py_buffer(packed)])
