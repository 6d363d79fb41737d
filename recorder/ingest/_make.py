"""Event construction for the mapper at a lower cost per field.

A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__``
looked up anew each time; a mapped trace builds some twenty events of up to 25
fields. :func:`maker` compiles, once per class, a keyword-only function that makes
the same frozen slotted instance for about a fifth of the cost: it creates an
instance of a private *writable twin* (a subclass adding no slot, whose
``__setattr__`` is ``object``'s again), stores each field with a plain attribute
store (the interpreter's fast path for a slot), then turns the instance into the
class itself by assigning ``__class__`` (allowed: the twin's layout is the class's).
It is used only for a class whose ``__init__`` is the plain generated one (slotted,
no ``__post_init__``); any other class is built by calling it.

``maker(cls, head)`` takes the fields named in ``head`` as one tuple, its only positional
argument (the mapper passes each event's envelope so): a call with the rest as keywords
then builds no dict on either side.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar, cast

__all__ = ["ENVELOPE", "MAKERS", "Envelope", "maker"]

ENVELOPE = ("run_id", "seq", "ts", "turn", "iteration", "step_id", "trace_id", "span_id")
"""The envelope fields the mapper sets on every event, as the ``head`` of its makers."""
Envelope: TypeAlias = tuple[str, int, int, int, int, str, str | None, str | None]

T = TypeVar("T")
_MISSING = object()
_LOCALS = frozenset({"_new", "_cls", "_twin", "_MISSING", "_made", "_head"})
"""Names the compiled source uses itself: a field so named is built the plain way."""


def _descriptor(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def _plain(cls: type) -> bool:
    """A slotted dataclass whose ``__init__`` only stores its arguments."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return False
    fields = dataclasses.fields(cls)
    return "__dict__" not in dir(cls) and all(
        f.init and f.name.isidentifier() and not keyword.iskeyword(f.name)
        and f.name not in _LOCALS and not f.name.startswith("__")
        and hasattr(_descriptor(cls, f.name), "__set__") for f in fields)


def _twin(cls: type) -> type:
    """A subclass of ``cls`` with its layout whose instances take plain attribute stores."""
    return type(f"_Writable{cls.__name__}", (cls,), {
        "__slots__": (), "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__, "__module__": cls.__module__})


def _build(cls: type[T], head: tuple[str, ...]) -> Callable[..., T]:
    if not _plain(cls):
        return _called(cls, head)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_twin": _twin(cls),
                                 "_MISSING": _MISSING}
    params = ["_head, /"] if head else []
    params.append("*")
    body = [f"    ({''.join(f'_made.{n}, ' for n in head)}) = _head\n"] if head else []
    for f in dataclasses.fields(cast(Any, cls)):
        n = f.name
        if n in head:
            continue
        if f.default is not dataclasses.MISSING:
            namespace[f"_d_{n}"] = f.default
            params.append(f"{n}=_d_{n}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_f_{n}"] = f.default_factory
            params.append(f"{n}=_MISSING")
            body.append(f"    if {n} is _MISSING:\n        {n} = _f_{n}()\n")
        else:
            params.append(n)
        body.append(f"    _made.{n} = {n}\n")
    source = (f"def make({', '.join(params)}):\n    _made = _new(_twin)\n"
              + "".join(body) + "    _made.__class__ = _cls\n    return _made\n")
    exec(compile(source, f"<maker of {cls.__qualname__}>", "exec"), namespace)
    return cast(Callable[..., T], namespace["make"])


def _called(cls: type[T], head: tuple[str, ...]) -> Callable[..., T]:
    """The class itself as the maker (``head`` values passed to it as keywords)."""
    if not head:
        return cls

    def make(values: tuple[Any, ...], /, **fields: Any) -> T:
        return cls(**dict(zip(head, values, strict=True)), **fields)
    return make


MAKERS: dict[tuple[type, tuple[str, ...]], Callable[..., Any]] = {}
"""The constructors compiled so far, by class and head."""


def maker(cls: type[T], head: tuple[str, ...] = ()) -> Callable[..., T]:
    """The compiled constructor of a dataclass (the same instance as ``cls(**fields)``);
    with ``head``, the values of those fields come first, as one tuple."""
    found = MAKERS.get((cls, head))
    if found is None:
        names = {f.name for f in dataclasses.fields(cast(Any, cls))}
        if not set(head) <= names or len(set(head)) != len(head):
            raise ValueError(f"maker({cls.__qualname__}, {head!r}): head must name distinct "
                             "fields of the class")
        found = MAKERS[(cls, head)] = _build(cls, head)
    return found
