"""A finished why report kept in the store: ``<store>/why/<run_id>.<key>.json``.

``key`` hashes the agent reference and the search's options, so a report is
reused only for the same question asked of the same agent. The file holds the
report's JSON form (``lens/schemas/why_report.schema.json``) with the agent
reference, the options and when it was computed; it is written atomically
(temporary file, fsync, rename), so a reader never sees half a report. A file
that does not parse or validate is :class:`CacheUnreadable`, never a report.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from footprint._errors import FootprintError
from lens.explain._report import WhyReport, schema, why_dict

__all__ = ["CacheUnreadable", "CachedWhy", "cache_path", "load_report", "report_from",
           "save_report"]

_FOLDER = "why"


class CacheUnreadable(FootprintError):
    """A cached why report that does not parse or does not match the report's schema."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedWhy:
    """A report read back from the store, with the agent and time it was computed with."""

    report: WhyReport
    agent: str
    computed_at: str
    path: Path


def cache_path(store_root: Path, run_id: str, agent: str, options: Mapping[str, Any]) -> Path:
    """Where the report of ``run_id`` searched with ``agent`` and ``options`` is kept."""
    if not run_id or not agent:
        raise ValueError(f"cache_path needs a run id and an agent reference; got {run_id!r}, "
                         f"{agent!r}")
    key = json.dumps({"agent": agent, "options": dict(options)}, sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(store_root) / _FOLDER / f"{run_id}.{digest}.json"


def save_report(path: Path, report: WhyReport, *, agent: str, options: Mapping[str, Any],
                now: datetime | None = None) -> None:
    """Write ``report`` to ``path`` atomically: a temporary file, fsync, then rename."""
    at = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    data = {"agent": agent, "options": dict(options), "computed_at": at,
            "report": why_dict(report)}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, default=str)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_report(path: Path) -> CachedWhy | None:
    """The cached report at ``path``; ``None`` when there is none; ``CacheUnreadable`` when
    the file does not parse or validate."""
    import jsonschema

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheUnreadable(f"cached why report {path.name} cannot be read ({exc})") from exc
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("agent"), str) or \
                not isinstance(data.get("computed_at"), str):
            raise ValueError("no 'agent' and 'computed_at' strings")
        jsonschema.validate(data.get("report"), schema())
        report = report_from(data["report"])
    except (ValueError, TypeError, jsonschema.ValidationError) as exc:
        what = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
        raise CacheUnreadable(f"cached why report {path.name} is not a valid report "
                              f"({what[:120]}); ignored, press the search key to compute "
                              "it again") from exc
    return CachedWhy(report=report, agent=data["agent"], computed_at=data["computed_at"],
                     path=path)


def report_from(data: Mapping[str, Any]) -> WhyReport:
    """A :class:`WhyReport` from its JSON form (lists back to tuples, nested reports
    rebuilt), led by the dataclasses' own field types."""
    built: WhyReport = _build(WhyReport, data)
    return built


def _build(cls: type, data: Any) -> Any:
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__} needs an object; got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _value(hints[f.name], data[f.name])
                  for f in fields(cls) if f.name in data})


def _value(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _value(inner[0], value) if len(inner) == 1 else value
    if origin is tuple and isinstance(value, list):
        args = typing.get_args(hint)
        item = args[0] if args else Any
        return tuple(_value(item, v) for v in value)
    if isinstance(hint, type) and is_dataclass(hint):
        return _build(hint, value)
    return value
