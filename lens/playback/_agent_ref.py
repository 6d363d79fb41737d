"""``--agent MODULE:ATTR``: load the agent a replay or a counterfactual re-run rebuilds.

``MODULE`` is a dotted module path (``lens._examples.support_desk``; the current
directory is searched first, as ``python -m`` does) or a Python file
(``examples/support_desk.py``; its folder is put on the import path, as
``python FILE.py`` does, so it may import a module beside it); ``ATTR`` names an ``Agent`` or a
factory returning one. A factory that accepts ``sink=`` is called with the
sink the lens records into.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from footprint._errors import ConfigError, did_you_mean
from footprint.events import EventSink

__all__ = ["build_agent", "load_target"]

_EXAMPLE = "lens._examples.support_desk:make_agent"


def _module(name: str, flag: str = "--agent") -> ModuleType:
    if name.endswith(".py") or "/" in name or "\\" in name:
        path = Path(name)
        if not path.is_file():
            raise ConfigError(f"{flag} file {name!r} does not exist; give a path to a .py "
                              f"file or a module path such as {_EXAMPLE!r}")
        folder = str(path.resolve().parent)
        if folder not in sys.path:  # as `python FILE.py` does: its siblings import
            sys.path.insert(0, folder)
        tag = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
        spec = importlib.util.spec_from_file_location(f"_footprint_agent_{tag}", path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{flag} file {name!r} cannot be imported; is it Python source?")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ConfigError(f"{flag} file {name!r} failed to import: "
                              f"{type(exc).__name__}: {exc}; fix the file") from exc
        return module
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)  # as `python -m` does: a module in the current directory
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(f"{flag} module {name!r} cannot be imported ({exc}); check the "
                          f"module path and PYTHONPATH, e.g. {_EXAMPLE!r}") from exc
    except Exception as exc:  # its own code failed (a syntax error, a raise at import)
        raise ConfigError(f"{flag} module {name!r} failed to import: "
                          f"{type(exc).__name__}: {exc}; fix the module") from exc


def load_target(ref: str, *, flag: str = "--agent", example: str = _EXAMPLE,
                kind: str = "an Agent or a factory") -> Any:
    """The object ``MODULE:ATTR`` names (an Agent or a factory; for ``flag`` other than
    ``--agent``, whatever ``kind`` says, e.g. a judge function)."""
    module_name, sep, attr = ref.rpartition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{flag} {ref!r} is not MODULE:ATTR; write e.g. {example!r}")
    module = _module(module_name, flag)
    if not hasattr(module, attr):
        names = [n for n in dir(module) if not n.startswith("_")]
        raise ConfigError(f"{flag} {ref!r}: module {module_name!r} has no {attr!r}"
                          f"{did_you_mean(attr, names)}; name {kind}")
    target = getattr(module, attr)
    if flag == "--agent" and not (hasattr(target, "run_sync") or callable(target)):
        raise ConfigError(f"{flag} {ref!r}: {attr!r} is a {type(target).__name__}, not an "
                          f"Agent or a factory; name {kind} that returns one")
    return target


def _accepts_sink(factory: Any) -> bool:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "sink" or p.kind is p.VAR_KEYWORD for p in params)


def _needs(factory: Any, given: dict[str, Any]) -> str | None:
    """The first argument ``factory`` needs beyond ``given`` (``None``: it can be called)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(**given)
    except TypeError:
        return next((p.name for p in sig.parameters.values() if p.default is p.empty
                     and p.name not in given and p.kind not in (p.VAR_POSITIONAL,
                                                                 p.VAR_KEYWORD)), "?")
    return None


def build_agent(target: Any, sink: EventSink) -> Any:
    """An agent from ``target`` that records into ``sink`` (a factory is called once)."""
    agent = target
    if not hasattr(target, "run_sync") and callable(target):
        given: dict[str, Any] = {"sink": sink} if _accepts_sink(target) else {}
        needs = _needs(target, given)
        if needs is not None:
            name = getattr(target, "__name__", type(target).__name__)
            raise ConfigError(f"--agent names {name!r}, but {name!r} takes an argument "
                              f"{needs!r} that a factory is not given (it gets only sink= and "
                              "seed=); name an Agent or a factory that returns one")
        agent = target(**given)
    if not hasattr(agent, "run_sync"):
        raise ConfigError(f"--agent gave {type(agent).__name__} {clip_repr(agent)}, which has "
                          "no run_sync(); name an Agent or a factory that returns one")
    if hasattr(agent, "variant"):
        agent = agent.variant(sink=sink)
    return agent


def clip_repr(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"
