"""Events to flat JSON-safe records and back, driven by the dataclass type hints.

Each class gets one plan, built on first use from its resolved type hints and
cached: per field, how to encode it (``None`` when the value is already
JSON-safe) and how to decode it. Tuples become lists and nested dataclasses
become dicts on the way out; on the way back the hints rebuild them exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

from footprint._errors import ConfigError, did_you_mean
from footprint.events._catalog import ENVELOPE_FIELDS, EVENT_TYPES, Event
from footprint.events._evidence import JSONValue

__all__ = ["field_types", "from_record", "payload_of", "to_record"]

Convert: typing.TypeAlias = Callable[[Any], Any]
_SCALARS = (str, int, float, bool, type(None))
_UNIONS = (Union, types.UnionType)
_ENVELOPE = frozenset(ENVELOPE_FIELDS)


@dataclass(frozen=True, slots=True)
class _FieldPlan:
    name: str
    encode: Convert | None
    decode: Convert | None
    required: bool
    nullable: bool


_ABSENT = object()
"""A key missing from a record (``None`` is a value a record may hold)."""


def _resolve_field_types(cls: type) -> Mapping[str, Any]:
    from footprint.injection import _types as injection_types
    from footprint.providers import _types as provider_types

    namespace = {**vars(injection_types), **vars(provider_types)}
    namespace.update(vars(sys.modules[cls.__module__]))
    hints = typing.get_type_hints(cls, globalns=namespace)
    return types.MappingProxyType({f.name: hints[f.name] for f in dataclasses.fields(cls)})


field_types = typing.cast(
    Callable[[type], Mapping[str, Any]], functools.cache(_resolve_field_types)
)
"""The resolved type hint of every dataclass field of a class, in field order (cached)."""


# ── JSON values ────────────────────────────────────────────────────────────


def _jsonify(value: Any) -> JSONValue:
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonify(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonify(v) for v in value]
    raise ConfigError(
        f"to_record: {value!r:.60} ({type(value).__name__}) in a free JSON field is not JSON;"
        " convert it to str, int, float, bool, None, list or dict before emitting"
    )


def _loads(value: Any) -> Any:
    """Structured fields may arrive as JSON text (a store's string column)."""
    return json.loads(value) if isinstance(value, str) else value


def _as_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _as_mapping(value: Any) -> Any:
    return dict(_loads(value))


def _is_json_union(args: tuple[Any, ...]) -> bool:
    return any(typing.get_origin(a) in (list, dict) for a in args)


# ── converters per type hint ───────────────────────────────────────────────


def _encoder(tp: Any) -> Convert | None:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in _SCALARS or origin is Literal:
        return None
    if tp is Any or origin in (list, dict, Mapping) or (origin in _UNIONS and _is_json_union(args)):
        return _jsonify
    if origin in _UNIONS:
        inner = [_encoder(a) for a in args if a is not type(None)]
        if all(e is None for e in inner):
            return None
        if len(inner) == 1 and inner[0] is not None:
            return _optional(inner[0])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _encoder(args[0])
        return list if item is None else functools.partial(_encode_items, item)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _nested_encoder(tp)
    raise TypeError(f"events: no record encoding for type hint {tp!r}; use a JSON-able shape")


def _decoder(tp: Any) -> Convert | None:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is float:
        return _as_float
    if tp in _SCALARS or origin is Literal or tp is Any or origin is list:
        return None
    if origin in (dict, Mapping):
        return _as_mapping
    if origin in _UNIONS:
        if _is_json_union(args):
            return None
        inner = [_decoder(a) for a in args if a is not type(None)]
        if len(inner) == 1 and inner[0] is not None:
            return _optional(inner[0])
        return None
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return functools.partial(_decode_items, _decoder(args[0]))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return functools.partial(_decode_nested, tp)
    raise TypeError(f"events: no record decoding for type hint {tp!r}; use a JSON-able shape")


def _optional(convert: Convert) -> Convert:
    return lambda value: None if value is None else convert(value)


def _encode_items(item: Convert, values: Any) -> list[Any]:
    return [item(v) for v in values]


def _decode_items(item: Convert | None, values: Any) -> tuple[Any, ...]:
    values = _loads(values)
    return tuple(values) if item is None else tuple(item(v) for v in values)


def _nested_encoder(cls: type) -> Convert:
    """An encoder bound to ``cls``'s plan (nested shapes are never recursive)."""
    plans = _plan(cls)
    if all(plan.encode is None for plan in plans):
        names = tuple(plan.name for plan in plans)
        return functools.partial(_encode_plain, names)
    return functools.partial(_encode_fields, plans)


def _encode_plain(names: tuple[str, ...], value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in names}


def _encode_fields(plans: tuple[_FieldPlan, ...], value: Any) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for plan in plans:
        item = getattr(value, plan.name)
        record[plan.name] = item if plan.encode is None else plan.encode(item)
    return record


def _decode_nested(cls: type, value: Any) -> Any:
    return _build(cls, _loads(value))


# ── plans ──────────────────────────────────────────────────────────────────


def _admits_none(tp: Any) -> bool:
    return tp is Any or (typing.get_origin(tp) in _UNIONS and type(None) in typing.get_args(tp))


def _compute_plan(cls: type) -> tuple[_FieldPlan, ...]:
    hints = field_types(cls)
    return tuple(
        _FieldPlan(
            name=f.name,
            encode=_encoder(hints[f.name]),
            decode=_decoder(hints[f.name]),
            required=f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING,
            nullable=_admits_none(hints[f.name]),
        )
        for f in dataclasses.fields(cls)
    )


_plan = typing.cast(
    Callable[[type], tuple[_FieldPlan, ...]], functools.cache(_compute_plan)
)


def _compute_decode_plan(cls: type) -> tuple[tuple[str, Convert | None, bool, bool], ...]:
    return tuple((p.name, p.decode, p.required, p.nullable) for p in _plan(cls))


_decode_plan = typing.cast(
    Callable[[type], tuple[tuple[str, Convert | None, bool, bool], ...]],
    functools.cache(_compute_decode_plan),
)
"""``_plan`` as plain tuples: rebuilding a million stored events reads these fields
a dozen million times, and tuple unpacking is the cheapest way to."""


def _build(cls: type, record: Mapping[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    get = record.get
    for name, decode, required, nullable in _decode_plan(cls):
        value = get(name, _ABSENT)
        if value is _ABSENT or (value is None and not nullable):
            if required:
                raise ConfigError(
                    f"from_record: a {cls.__name__} record has no {name!r}"
                    f" (got keys {sorted(record)!r}); add the field to the record"
                )
            continue
        kwargs[name] = value if decode is None else decode(value)
    return cls(**kwargs)


# ── public ─────────────────────────────────────────────────────────────────


def to_record(event: Event) -> dict[str, JSONValue]:
    """A flat JSON-safe dict: envelope and payload fields at top level by name.

    Nested dataclasses become dicts and tuples become lists;
    ``from_record(to_record(e)) == e``.
    """
    return _encode_fields(_plan(type(event)), event)


def payload_of(event: Event) -> dict[str, JSONValue]:
    """The non-envelope part of :func:`to_record` (the event's typed payload)."""
    record: dict[str, JSONValue] = {}
    for plan in _plan(type(event)):
        if plan.name not in _ENVELOPE:
            value = getattr(event, plan.name)
            record[plan.name] = value if plan.encode is None else plan.encode(value)
    return record


def from_record(record: Mapping[str, Any]) -> Event:
    """Rebuild the event a :func:`to_record` dict (or a store row) describes.

    Dispatches on ``type``; keys the class does not know are ignored, and a
    ``None`` for a field that cannot be ``None`` means "use the default".
    """
    tag = record.get("type")
    cls = EVENT_TYPES.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise ConfigError(
            f"from_record: unknown event type {tag!r}{did_you_mean(str(tag), EVENT_TYPES)};"
            " use one of the tags in footprint.events.EVENT_TYPES"
        )
    try:
        event: Event = _build(cls, record)
    except (TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(
            f"from_record: a {tag!r} record does not fit {cls.__name__} ({exc});"
            " pass a dict made by to_record or a store row of that type"
        ) from exc
    return event
