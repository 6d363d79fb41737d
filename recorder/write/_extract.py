"""Per-class extractors, built once per event class: payload JSON, hot columns, blobs.

The writer converts a batch class by class. A :class:`ClassPlan` builds
each payload dict with one compiled function and spells up to ``_SUB`` of
them with a single ``orjson`` call (sorted keys, compact), cut apart again
by :func:`dumps_each`; the hot columns are lifted straight off the objects.
An event ``orjson`` cannot spell (a non-string mapping key, an integer
beyond 64 bits, a value that is not JSON) falls back to
``footprint.events.payload_of`` and the standard library, the reference
path, so what is stored never depends on the fast path.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import keyword
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

import orjson

from footprint._errors import ConfigError
from footprint.events import ENVELOPE_FIELDS, EventBase, field_types, payload_of
from recorder.write._chain import canonical_json
from recorder.write._hot import hot_plan
from recorder.write._safe import safe_value

__all__ = ["BLOB_KEY", "BlobSink", "ClassPlan", "dumps_each", "escaped_payload",
           "plan_for", "text_sha256"]

BLOB_KEY = "$blob"
"""A payload value ``{"$blob": "<sha256 hex>", "chars": n}`` stands for large text in ``blobs``."""

_ENVELOPE = frozenset(ENVELOPE_FIELDS)
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

Extract = Callable[[Any], Any]

_SUB = 128
"""Payloads spelled per ``orjson`` call: few enough to be freed before a GC pass sees them."""


def _default(value: Any) -> Any:
    """Nested dataclasses become dicts (so their keys sort too); mappings and sequences plain."""
    cls = type(value)
    if hasattr(cls, "__dataclass_fields__") and not isinstance(value, type):
        return _nested_builder(cls)(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list | tuple):
        return list(value)
    raise TypeError(f"{cls.__name__} is not JSON")


_dumps_sorted = functools.partial(orjson.dumps, default=_default, option=_OPTIONS)
_dumps_flat = functools.partial(
    orjson.dumps, default=_default, option=_OPTIONS & ~orjson.OPT_SORT_KEYS
)


def text_sha256(text: str) -> str:
    """The SHA-256 (hex) of a text's UTF-8 bytes: the key of its blob."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key(digest: str) -> int:
    """A blob's digest as remembered: its first 128 bits (two texts sharing them would
    need ~2**64 blobs to be likely)."""
    return int(digest[:32], 16)


class BlobSink:
    """Collects large texts by sha256: ``found`` is new this batch, ``seen`` already written.

    ``seen`` holds at most ``seen_limit`` digests (besides one batch's), in two
    generations: once the newer one holds half of them it becomes the older one and the
    oldest half is forgotten, while a digest met again moves to the newer one. So a text
    repeated within ``seen_limit // 2`` distinct others (a system prompt, a conversation's
    history) is written once, and the set does not grow with every blob a long-running
    writer meets (a forgotten text met again is written again: readers take either copy).
    A digest is remembered by its first 128 bits as an int (:func:`_key`: 44 bytes, not a
    64-character string's 113), so the full set costs ~4 MB less.
    """

    __slots__ = ("_older", "found", "limit", "seen", "seen_limit")

    def __init__(self, limit: int, seen_limit: int) -> None:
        self.limit = limit
        self.seen_limit = seen_limit
        self.seen: set[int] = set()
        self._older: set[int] = set()
        self.found: dict[str, str] = {}

    def __len__(self) -> int:
        """The digests remembered as written."""
        return len(self.seen) + len(self._older)

    def blobify(self, payload: dict[str, Any]) -> bool:
        """Replace each top-level text of ``limit`` chars or more by a reference to its blob."""
        changed = False
        for key, value in payload.items():
            if isinstance(value, str) and len(value) >= self.limit:
                digest = text_sha256(value)
                mark = _key(digest)
                if mark not in self.seen:
                    if mark in self._older:
                        self.seen.add(mark)
                    else:
                        self.found[digest] = value
                payload[key] = {BLOB_KEY: digest, "chars": len(value)}
                changed = True
        return changed

    def take(self) -> dict[str, str]:
        """The blobs found since the last call, now counted as written."""
        found, self.found = self.found, {}
        self.seen.update(map(_key, found))
        if len(self.seen) >= max(self.seen_limit // 2, 1):
            self._older, self.seen = self.seen, set()
        return found


def _slow_payload(event: EventBase, blobs: BlobSink) -> bytes:
    """The reference path: ``payload_of`` and the standard library; a payload they cannot
    spell (a lone surrogate, a value that is not JSON, nesting past the recursion limit)
    is stored in its escaped form (``recorder.write._safe``) instead of failing its batch."""
    record: dict[str, Any]
    try:
        record = payload_of(event)  # type: ignore[arg-type]
        json.dumps(record, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, TypeError, RecursionError, ConfigError):  # UnicodeError is a ValueError
        record = escaped_payload(event)
    blobs.blobify(record)
    return canonical_json(record).encode("utf-8")


def escaped_payload(event: EventBase) -> dict[str, Any]:
    """The event's payload with every unspellable value in its escaped form."""
    return {f.name: safe_value(getattr(event, f.name)) for f in dataclasses.fields(event)
            if f.name not in _ENVELOPE}


def _down(value: Any, key: str) -> Any:
    """One level down a key path: a mapping by key, a dataclass by attribute, else nothing."""
    if isinstance(value, Mapping):
        return value.get(key)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return getattr(value, key, None)
    return None


@functools.cache
def _is_dataclass_type(cls: type) -> bool:
    return dataclasses.is_dataclass(cls) and isinstance(cls, type)


def _hop(values: list[Any], key: str) -> list[Any]:
    """``_down`` over a column; at C speed when every value is a dataclass with ``key``."""
    if all(map(_is_dataclass_type, set(map(type, values)))):
        try:
            return list(map(attrgetter(key), values))
        except AttributeError:  # a field this class lacks: None for that value, below
            pass
    return [v.get(key) if type(v) is dict else None if v is None else _down(v, key)
            for v in values]


_TEXTY = frozenset({str, type(None)})


def _column(paths: tuple[tuple[str, ...], ...], members: Sequence[Any]) -> list[str | None]:
    """The first path holding a string wins, member by member (the ``hot_fields`` rule)."""
    out: list[str | None] | None = None
    for path in paths:
        values = list(map(attrgetter(path[0]), members))
        for key in path[1:]:
            values = _hop(values, key)
        if not set(map(type, values)) <= _TEXTY:
            values = [v if type(v) is str else None for v in values]
        out = values if out is None else [a if a is not None else b
                                          for a, b in zip(out, values, strict=True)]
    return out if out is not None else [None] * len(members)


_SCALAR_HINTS = (str, int, float, bool, type(None))


def _flat(hint: Any) -> bool:
    """``True`` when values of this hint hold no mapping, so their JSON needs no key sort."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCALAR_HINTS or origin is typing.Literal:
        return True
    if origin in (typing.Union, types.UnionType):
        return all(_flat(a) for a in args)
    return origin is tuple and len(args) == 2 and args[1] is Ellipsis and _flat(args[0])


def _needs_sort(cls: type, names: tuple[str, ...]) -> bool:
    try:
        hints = field_types(cls)
    except Exception:  # unresolvable hints on a foreign event class: sort to be safe
        return True
    return not all(_flat(hints[name]) for name in names)


def _dict_builder(cls: type, names: tuple[str, ...]) -> Extract:
    """``event -> {name: event.name, …}`` with the names in sorted order, compiled once.

    A dict display over attribute loads is about 2.5x faster than
    ``dict(zip(names, getter(event)))``; the source is built only from the
    class's own dataclass field names, each checked to be an identifier.
    """
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
        getter = _values_getter(names)
        return lambda event: dict(zip(names, getter(event), strict=True))
    items = ", ".join(f"{n!r}: event.{n}" for n in names)
    code = compile(f"def build(event):\n    return {{{items}}}\n",
                   f"<payload builder of {cls.__qualname__}>", "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return typing.cast(Extract, namespace["build"])


BuildAll = Callable[[Sequence[Any]], list[dict[str, Any]]]


def _nested_class(hint: Any) -> type | None:
    """The dataclass a field holds, when its hint is one dataclass (or it or ``None``)."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union,
                                                                   types.UnionType) else (hint,)
    found = [h for h in options if h is not type(None)]
    if len(found) == 1 and _is_dataclass_type(found[0]) and all(
            f.name.isidentifier() and not keyword.iskeyword(f.name)
            for f in dataclasses.fields(found[0])):
        return typing.cast(type, found[0])
    return None


def _nested_fields(cls: type, names: tuple[str, ...]) -> dict[str, type]:
    """The fields of ``cls`` among ``names`` that hold one nested dataclass."""
    try:
        hints = field_types(cls)
    except Exception:  # unresolvable hints on a foreign event class: nothing inlined
        return {}
    nested = {name: _nested_class(hints[name]) for name in names}
    return {name: kind for name, kind in nested.items() if kind is not None}


def _list_builder(cls: type, names: tuple[str, ...]) -> BuildAll:
    """``events -> [{name: event.name, …}, …]``: :func:`_dict_builder` as one compiled
    list comprehension, which spares a Python call per event.

    A field holding a nested dataclass (``cursor_move``) is spelled as its dict
    right there when the value is exactly that class: the same dict ``_default``
    makes, without a call back from ``orjson`` per event.
    """
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
        one = _dict_builder(cls, names)
        return lambda events: list(map(one, events))
    nested = _nested_fields(cls, names)
    namespace: dict[str, Any] = {}
    items = []
    for k, n in enumerate(names):
        kind = nested.get(n)
        if kind is None:
            items.append(f"{n!r}: event.{n}")
            continue
        namespace[f"_C{k}"] = kind
        inner = ", ".join(f"{f.name!r}: _v{k}.{f.name}" for f in dataclasses.fields(kind))
        items.append(f"{n!r}: ({{{inner}}} if type(_v{k} := event.{n}) is _C{k} else _v{k})")
    code = compile(f"def build_all(events):\n    return [{{{', '.join(items)}}} "
                   "for event in events]\n",
                   f"<payload builder of {cls.__qualname__}>", "exec")
    exec(code, namespace)
    return typing.cast(BuildAll, namespace["build_all"])


def _values_getter(names: tuple[str, ...]) -> Extract:
    if len(names) == 1:
        only = attrgetter(names[0])
        return lambda event: (only(event),)
    if not names:
        return lambda event: ()
    return attrgetter(*names)


_SEPARATOR = orjson.Fragment(b"\x01" * 16)
"""Spelled verbatim between two values: raw control bytes, which JSON text never holds
(sixteen of them, so the cut below is found in long strides)."""
_CUT = b"," + b"\x01" * 16 + b","


def dumps_each(dumps: Callable[[Any], bytes], values: Sequence[Any]) -> list[bytes] | None:
    """``list(map(dumps, values))`` from ONE ``dumps`` call, or ``None`` if it cannot be cut.

    The values are dumped as one array with :data:`_SEPARATOR` between them,
    and the output is cut at :data:`_CUT`. Strings escape control bytes and
    JSON has none between tokens, so exactly ``len(values)`` parts means
    every cut is a separator (anything else, e.g. a user-supplied
    ``orjson.Fragment``, returns ``None``). One large result instead of many
    small ones also spares the allocator: see ``ClassPlan.payloads``.
    """
    if not values:
        return []
    spaced = [_SEPARATOR] * (2 * len(values) - 1)
    spaced[::2] = values
    parts = dumps(spaced).split(_CUT)
    if len(parts) != len(values):
        return None
    if len(parts) == 1:
        return [parts[0][1:-1]]
    parts[0], parts[-1] = parts[0][1:], parts[-1][:-1]  # the array's brackets
    return parts


@dataclasses.dataclass(frozen=True, slots=True)
class ClassPlan:
    """How to turn events of one class into payload JSON and hot-column values.

    ``slack`` is the fewest bytes the payload's keys and punctuation take:
    a payload shorter than ``slack + limit`` bytes cannot hold a text of
    ``limit`` chars, so only longer ones are searched for blobs.
    """

    build: BuildAll
    dumps: Callable[[Any], bytes]
    slack: int
    hot: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]
    admitted: bool

    def payloads(self, members: Sequence[EventBase], blobs: BlobSink) -> list[bytes]:
        """Each member's stored payload text (UTF-8), large texts moved to ``blobs``.

        One ``orjson`` call spells up to ``_SUB`` payloads (:func:`dumps_each`);
        their dicts die young, so the cyclic GC never walks them. A payload
        ``orjson`` refuses takes the one-payload path, then the reference one.
        """
        out: list[bytes] = []
        floor = self.slack + blobs.limit
        for at in range(0, len(members), _SUB):
            chunk = members[at:at + _SUB]
            dicts = self.build(chunk)
            try:
                texts = dumps_each(self.dumps, dicts)
            except (orjson.JSONEncodeError, TypeError):
                texts = None
            if texts is None:
                out += map(self._one, dicts, chunk, itertools.repeat(blobs))
                continue
            if max(map(len, texts)) >= floor:
                for k, text in enumerate(texts):
                    if len(text) >= floor and blobs.blobify(dicts[k]):
                        texts[k] = self.dumps(dicts[k])
            out += texts
        return out

    def _one(self, payload: dict[str, Any], event: EventBase, blobs: BlobSink) -> bytes:
        try:
            body = self.dumps(payload)
        except (orjson.JSONEncodeError, TypeError):
            return _slow_payload(event, blobs)
        if len(body) >= self.slack + blobs.limit and blobs.blobify(payload):
            body = self.dumps(payload)
        return body

    def hot_columns(self, members: Sequence[EventBase]) -> list[tuple[str, list[str | None]]]:
        """``(column, values)`` for every hot column this class can fill."""
        return [(column, _column(paths, members)) for column, paths in self.hot]

    def admitted_by(self, members: Sequence[EventBase]) -> list[int | None] | None:
        """The ``admitted_by`` column values, or ``None`` when the class has no such field."""
        if not self.admitted:
            return None
        return [v if isinstance(v, int) else None for v in map(_ADMITTED, members)]


_ADMITTED = attrgetter("admitted_by")


def _build(cls: type) -> ClassPlan:
    names = tuple(sorted(f.name for f in dataclasses.fields(cls) if f.name not in _ENVELOPE))
    # '{' + '}' + a comma between items + per item '"name":' and a value of >= 1 byte; the
    # long text's own quotes are 2 more bytes.
    slack = 2 + 2 * max(len(names) - 1, 0) + sum(len(n) + 3 for n in names) + 2
    sort = _needs_sort(cls, names)
    return ClassPlan(
        build=_list_builder(cls, names),
        dumps=_dumps_sorted if sort else _dumps_flat,
        slack=slack,
        hot=hot_plan(names),
        admitted="admitted_by" in names,
    )


plan_for: Callable[[type], ClassPlan] = functools.cache(_build)
"""The :class:`ClassPlan` of an event class (built on first use, then cached)."""


def _build_nested(cls: type) -> Extract:
    return _dict_builder(cls, tuple(f.name for f in dataclasses.fields(cls)))


_nested_builder: Callable[[type], Extract] = functools.cache(_build_nested)
"""``value -> dict`` of a nested dataclass, all its fields (key order is left to orjson)."""
