"""Hypothesis strategies for the event catalog, shared by every test suite.

Strategies are derived from each event class's resolved type hints, so a new
event or field is covered without touching this file. Values are JSON-safe
(finite floats, JSON-native free values) and semantically valid where the
catalog says so (non-negative counters, summaries of at most 80 characters).

Import with ``from strategies import events, events_of, run_streams`` (the
``tests`` directory is on ``sys.path`` under pytest).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union

from hypothesis import strategies as st

from footprint.events import (
    EVENT_TYPES,
    SCHEMA_VERSION,
    SUMMARY_LIMIT,
    Event,
    JSONValue,
    field_types,
)

__all__ = [
    "events",
    "events_of",
    "json_scalars",
    "json_values",
    "run_streams",
    "strategy_for",
]

_UNIONS = (Union, types.UnionType)
_MAX_INT = 2**53  # exact in a double, so any JSON reader keeps it

_FIELD_OVERRIDES: Mapping[str, st.SearchStrategy[Any]] = {
    "schema_version": st.just(SCHEMA_VERSION),
    "run_id": st.text(alphabet="0123456789abcdef-", min_size=1, max_size=36),
    "content_summary": st.text(max_size=SUMMARY_LIMIT),
}


def json_scalars() -> st.SearchStrategy[JSONValue]:
    """JSON scalars: None, bools, safe integers, finite floats, short text."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-_MAX_INT, max_value=_MAX_INT),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
    )


def json_values() -> st.SearchStrategy[JSONValue]:
    """Arbitrary JSON values (nested lists and string-keyed dicts), small."""
    return st.recursive(
        json_scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.text(max_size=8), inner, max_size=3),
        ),
        max_leaves=8,
    )


def _json_mappings() -> st.SearchStrategy[dict[str, JSONValue]]:
    return st.dictionaries(st.text(max_size=8), json_values(), max_size=3)


def _is_json_union(args: tuple[Any, ...]) -> bool:
    return any(typing.get_origin(a) in (list, dict) for a in args)


def strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for one resolved type hint of the catalog."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    simple: dict[Any, st.SearchStrategy[Any]] = {
        str: st.text(max_size=20),
        int: st.integers(min_value=0, max_value=_MAX_INT),
        float: st.floats(min_value=0, max_value=1e12, allow_nan=False),
        bool: st.booleans(),
        type(None): st.none(),
    }
    if tp in simple:
        return simple[tp]
    if origin is Literal:
        return st.sampled_from(args)
    if tp is Any or origin is list or (origin in _UNIONS and _is_json_union(args)):
        return json_values()
    if origin in (dict, Mapping):
        return _json_mappings()
    if origin in _UNIONS:
        return st.one_of([strategy_for(a) for a in args])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return st.lists(strategy_for(args[0]), max_size=3).map(tuple)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_strategy(tp)
    raise TypeError(f"strategies: no strategy for type hint {tp!r}; extend strategy_for")


def _dataclass_strategy(
    cls: type, overrides: Mapping[str, st.SearchStrategy[Any]] | None = None
) -> st.SearchStrategy[Any]:
    given = {**_FIELD_OVERRIDES, **(overrides or {})}
    kwargs = {
        name: given[name] if name in given else strategy_for(tp)
        for name, tp in field_types(cls).items()
        if name != "type"
    }
    return st.builds(cls, **kwargs)


def events_of(cls: type[Event], **overrides: st.SearchStrategy[Any]) -> st.SearchStrategy[Event]:
    """Valid events of one class; ``overrides`` fixes strategies per field name."""
    if cls not in EVENT_TYPES.values():
        raise TypeError(f"events_of: {cls!r} is not in EVENT_TYPES")
    return _dataclass_strategy(cls, overrides)


def events(**overrides: st.SearchStrategy[Any]) -> st.SearchStrategy[Event]:
    """Valid events of every type in the catalog."""
    return st.one_of([events_of(cls, **overrides) for cls in EVENT_TYPES.values()])


def _as_stream(run_id: str, start_ts: int, batch: list[Event]) -> list[Event]:
    return [
        dataclasses.replace(event, run_id=run_id, seq=i, ts=start_ts + i)
        for i, event in enumerate(batch)
    ]


def run_streams(min_size: int = 1, max_size: int = 20) -> st.SearchStrategy[list[Event]]:
    """One run's events: a shared ``run_id``, ``seq`` 0, 1, 2… and rising ``ts``."""
    return st.builds(
        _as_stream,
        _FIELD_OVERRIDES["run_id"],
        st.integers(min_value=0, max_value=2**62),
        st.lists(events(), min_size=min_size, max_size=max_size),
    )

