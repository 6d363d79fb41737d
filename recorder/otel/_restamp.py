"""A frozen, slotted event copied with new ``trace_id``/``span_id``, at a fifth of ``replace``.

``dataclasses.replace`` re-runs ``__init__`` through keyword arguments
(~6 µs for a 25-field event). Events are frozen and already valid, so the
copy only has to put every slot's value on a fresh object. The fastest way
CPython offers is one straight-line function per class that calls each
slot's own setter (``member_descriptor.__set__``, which a frozen class's
``__setattr__`` never sees): ~1.3 µs. That function is written once per
class from the class's field names — identifiers by construction, checked
anyway — the same technique ``dataclasses`` uses for ``__init__``. Classes
without slots (a hand-written event) fall back to ``dataclasses.replace``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeAlias

from footprint.events import EventBase

__all__ = ["Restamp", "compile_restamp"]

Restamp: TypeAlias = Callable[[EventBase, str, str], EventBase]
"""``restamp(event, trace_hex, span_hex)`` -> a copy of ``event`` with those ids."""

_IDS = {"trace_id": "trace", "span_id": "span"}


def _slot_setter(cls: type, name: str) -> Callable[[object, object], None] | None:
    """The ``__set__`` of the slot ``name`` of ``cls`` (searched along the MRO), if a slot."""
    for klass in cls.__mro__:
        slot = klass.__dict__.get(name)
        if slot is not None:
            setter = getattr(slot, "__set__", None)
            is_slot = type(slot).__name__ == "member_descriptor"
            return setter if is_slot and callable(setter) else None
    return None


def _replace(event: EventBase, trace: str, span: str) -> EventBase:
    return dataclasses.replace(event, trace_id=trace, span_id=span)


def compile_restamp(cls: type[EventBase]) -> Restamp:
    """The copy-with-ids function of one event class (see the module docstring)."""
    names = [f.name for f in dataclasses.fields(cls)]
    setters = [_slot_setter(cls, n) for n in names]
    has_dict = any("__dict__" in k.__dict__ for k in cls.__mro__)
    if has_dict or None in setters or not all(n.isidentifier() for n in names):
        return _replace
    lines = ["def restamp(event, trace, span):", "    new = _new(_cls)"]
    lines += [f"    _set{i}(new, {_IDS.get(n, 'event.' + n)})" for i, n in enumerate(names)]
    lines.append("    return new")
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    scope.update({f"_set{i}": setter for i, setter in enumerate(setters)})
    exec("\n".join(lines), scope)
    restamp: Restamp = scope["restamp"]
    return restamp
