"""JSON Schema of an event's record (:func:`footprint.events.to_record`), from its type hints.

The schema is derived from the same resolved hints the codec encodes by, so it describes
exactly what ``to_record`` writes: tuples as arrays, nested dataclasses as objects, free
JSON fields (``JSONValue``) as any JSON value, enumerations of ``Literal`` as ``enum``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Union

from footprint._errors import ConfigError
from footprint.events._codec import field_types
from footprint.events._evidence import JSONValue

__all__ = ["record_schema"]

_JSON_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean",
               type(None): "null"}
_ANY: dict[str, Any] = {}


def record_schema(event_type: type) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``to_record(event)`` for events of ``event_type``.

    Every field is required (``to_record`` writes them all); no other key is allowed.
    """
    if not (isinstance(event_type, type) and dataclasses.is_dataclass(event_type)):
        raise ConfigError(
            f"record_schema: {event_type!r:.60} is not an event class; pass one of the "
            "classes in footprint.events.EVENT_TYPES")
    schema = _object(event_type)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = event_type.__name__
    return schema


def _object(cls: type) -> dict[str, Any]:
    hints = field_types(cls)
    return {"type": "object", "properties": {name: _of(tp) for name, tp in hints.items()},
            "required": list(hints), "additionalProperties": False}


def _of(tp: Any) -> dict[str, Any]:
    if tp is JSONValue or tp is Any:
        return _ANY
    if tp in _JSON_NAMES:
        return {"type": ["integer", "number"]} if tp is float else {"type": _JSON_NAMES[tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_of(arg) for arg in args]}
    if origin is tuple or origin is list or origin is Sequence:
        items = args[0] if args and (len(args) == 1 or args[1] is Ellipsis) else Any
        return {"type": "array", "items": _of(items)}
    if origin is dict or origin is Mapping or tp is dict:
        return {"type": "object", "additionalProperties": _of(args[1]) if args else _ANY}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _object(tp)
    if isinstance(tp, type) and issubclass(tp, str):
        return {"type": "string"}
    return _ANY
