"""One chunk of events -> one Arrow batch of the ``events`` table, chained.

The envelope is read as one tuple per event (Arrow converts the tuples as
structs; ``orjson`` spells every ``E`` in one call). Payloads and hot
columns are converted class by class (``_extract``), then put back in emit
order with one Arrow ``take``. The chain links each row last, so a chunk
that fails to convert never moves a run's head.
"""

from __future__ import annotations

from collections import deque
from operator import attrgetter, itemgetter
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from footprint.events import EventBase
from recorder._chain import ENVELOPE_ORDER, LOCATOR_BYTES, envelope_canonical, extend_chains
from recorder._extract import BlobSink, dumps_each, plan_for
from recorder._hot import HOT_FIELDS

__all__ = ["ENVELOPE_TYPES", "convert"]

ENVELOPE_TYPES: tuple[tuple[str, pa.DataType], ...] = (
    ("schema_version", pa.int32()),
    ("run_id", pa.string()),
    ("seq", pa.int64()),
    ("ts", pa.int64()),
    ("type", pa.string()),
    ("turn", pa.int64()),
    ("iteration", pa.int64()),
    ("step_id", pa.string()),
    ("parent_step", pa.string()),
    ("trace_id", pa.string()),
    ("span_id", pa.string()),
)
"""The envelope columns in :data:`ENVELOPE_ORDER` with their Arrow types."""

_CLASS_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    *((name, pa.string()) for name in HOT_FIELDS), ("admitted_by", pa.int64()))
_ROW = attrgetter(*ENVELOPE_ORDER)
_RUN = itemgetter(ENVELOPE_ORDER.index("run_id"))
_ENVELOPE_STRUCT = pa.struct(list(ENVELOPE_TYPES))
_INTS = frozenset({int, type(None)})
_INT_FIELDS = tuple(itemgetter(ENVELOPE_ORDER.index(name)) for name in ENVELOPE_ORDER
                    if name in ("iteration", "schema_version", "seq", "ts", "turn"))
_DIGEST = pa.binary(32)


def _locators(digests: list[bytes]) -> pa.Array:
    """The first ``LOCATOR_BYTES`` of each 32-byte digest, cut in one vectorised pass."""
    full = pa.Array.from_buffers(_DIGEST, len(digests), [None, pa.py_buffer(b"".join(digests))])
    return pc.binary_slice(full, 0, LOCATOR_BYTES)


def _plain(rows: list[tuple[Any, ...]]) -> bool:
    """``True`` if every int envelope field is exactly an ``int`` or ``None``.

    Arrow truncates a float in an int column without a word, so floats
    (and other non-ints) are found here. Arrow itself refuses a bool there
    and non-text in a string column; ``orjson`` refuses the one thing Arrow
    takes as text (bytes).
    """
    for field in _INT_FIELDS:
        values = map(field, rows)
        try:
            if type(sum(values)) is int:  # C speed; a float or None shows up here
                continue
        except TypeError:  # a None (or worse) among them: look at each type
            pass
        if not set(map(type, map(field, rows))) <= _INTS:
            return False
    return True


def _envelopes(rows: list[tuple[Any, ...]]) -> list[bytes]:
    """``E`` of each envelope row (values in :data:`ENVELOPE_ORDER`).

    When every int field is a plain ``int`` (or ``None``), ``orjson`` spells
    them all in one call, byte for byte the reference; otherwise the
    reference spells them, and refuses what the spec refuses (a float, a bool).
    """
    if _plain(rows):
        try:
            spelled = dumps_each(orjson.dumps, rows)
        except orjson.JSONEncodeError:  # bytes, a lone surrogate, an int beyond 64 bits
            spelled = None
        if spelled is not None:
            return spelled
    return [envelope_canonical(dict(zip(ENVELOPE_ORDER, row, strict=True))).encode("utf-8")
            for row in rows]


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
    ordered: list[EventBase], sizes: list[tuple[type, int]], blobs: BlobSink
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
        payloads += plan.payloads(members, blobs)
        arrays = {name: pa.array(values, pa.string())
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
    events: list[EventBase], blobs: BlobSink, heads: dict[str, bytes], schema: pa.Schema
) -> tuple[pa.RecordBatch, list[tuple[Any, ...]]]:
    """One chunk as a batch in ``schema`` (emit order), linked onto ``heads``.

    Also returns each event's envelope values (in :data:`ENVELOPE_ORDER`).
    Every fallible conversion runs first: only a chunk that converted whole
    joins the chain.
    """
    rows = list(map(_ROW, events))
    envelope = pa.array(rows, _ENVELOPE_STRUCT).flatten()
    envelopes = _envelopes(rows)
    ordered, sizes, back = _by_class(events)
    payloads, by_class = _class_columns(ordered, sizes, blobs)
    if back is not None:
        payloads = list(map(payloads.__getitem__, back))
        names = [str(i) for i in range(len(by_class))]
        by_class = pa.RecordBatch.from_arrays(by_class, names=names).take(
            pa.array(back, pa.int32())).columns
    payload = pa.array(payloads, pa.binary()).cast(pa.string())
    runs = list(map(_RUN, rows))
    prev, link = extend_chains(heads, runs, envelopes, payloads)
    return pa.RecordBatch.from_arrays(
        [*envelope, *by_class, payload, _locators(prev), _locators(link)], schema=schema), rows
