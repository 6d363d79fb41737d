"""Shipped processors: redaction (by key path and by regex) and content capture levels."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias

import regex

from footprint._errors import ConfigError, did_you_mean
from footprint.events import (
    ENVELOPE_FIELDS,
    EVENT_TYPES,
    EventBase,
    from_record,
    summarize_content,
    to_record,
)
from recorder.write._chain import canonical_json
from recorder.write._redact_key import KEYED_SCHEME, RedactionKey, parse_marker, redaction_key
from recorder.write._safe import safe_value
from recorder.write._sink import Drop, Processor

__all__ = ["API_KEY_PATTERNS", "CONTENT_FIELDS", "CaptureLevel", "Redactor", "capture", "marker"]

API_KEY_PATTERNS: tuple[str, ...] = (
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style
    r"AKIA[0-9A-Z]{16}",  # AWS access key id
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API keys
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{20,}",  # bearer tokens in headers
)
"""Regexes for common API-key shapes; the default of :class:`Redactor`."""

CONTENT_FIELDS: tuple[str, ...] = (
    "user_message", "final_content", "content", "result", "raw_content", "content_summary",
    "request_ref", "args", "rationale", "message",
)
"""Payload fields that carry prompt, tool or model text (what capture levels act on)."""

CaptureLevel: TypeAlias = Literal["full", "hashes", "none"]
_ENVELOPE = frozenset(ENVELOPE_FIELDS)
_SCRUBBED_IDS = frozenset({"step_id", "parent_step"})
"""Envelope ids the engine builds from payload text (a tool-call id): patterns apply."""


def marker(text: str, key: RedactionKey) -> str:
    """What a redacted value becomes under ``key``: ``[redacted hmac-sha256:<key id>:<hex>]``
    (``recorder.write._redact_key``); equal values under one key match, so joins still work."""
    return key.marker(text)


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else canonical_json(value)


class Redactor:
    """``(event) -> event``: replace secrets before any sink sees them.

    ``paths`` are dotted key paths into the payload (``args.api_key``,
    ``raw_content``); ``*`` matches any key or list index, and a
    ``type:`` prefix limits a path to one event type
    (``tool.start:args.password``). A path goes on into a text that holds
    JSON (``tool.end:result.ssn``: a tool's result as the model read it). The
    whole value at a path is replaced by :func:`marker` of its text; a tool
    result redacted on ``tool.end`` is redacted the same way in the requests
    that carry it to the model later in the run (``llm.start``'s
    ``request_ref``). A path that can never match (an unknown event type, a
    field no event has) is refused when the Redactor is built. ``patterns`` are
    regexes searched in every payload string; each match is replaced by the
    marker of the match.

    A marker is keyed (HMAC-SHA256, ``recorder.write._redact_key``): ``key``
    (16 bytes or more), else ``$FOOTPRINT_REDACT_KEY``, else the key file
    ``key_file`` (default ``~/.config/footprint/redact.key``), made with a
    random key and mode 0600 on first use. Keep the key outside the store:
    with it, a small space of values (a card number) can be tried again.
    """

    __slots__ = ("_key", "_partials", "_paths", "_patterns", "_results")

    def __init__(
        self,
        paths: Iterable[str] = (),
        patterns: Iterable[str | re.Pattern[str]] = API_KEY_PATTERNS,
        *,
        key: bytes | str | None = None,
        key_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self._paths = tuple(_parse_path(p) for p in paths)
        self._key = redaction_key(key, key_file=key_file, origin="Redactor")
        self._patterns = tuple(re.compile(p) if isinstance(p, str) else p for p in patterns)
        self._results: dict[str, dict[str, tuple[str, str]]] = {}
        """Per run in flight: tool call id -> (result as recorded, as redacted)."""
        self._partials = tuple(_partial(p) for p in self._patterns)

    @property
    def key_id(self) -> str:
        """The id of the key this Redactor's markers are made with (it says nothing of it)."""
        return self._key.key_id

    def marker(self, text: str) -> str:
        """What ``text`` becomes when this Redactor redacts it."""
        return self._key.marker(text)

    def __call__(self, event: EventBase) -> EventBase | Drop:
        try:
            record: dict[str, Any] = to_record(event)  # type: ignore[arg-type]
        except (ValueError, TypeError, RecursionError):  # ConfigError is a ValueError
            return self._escaped(event)
        tag = record.get("type")
        changed = False
        for only, keys in self._paths:
            if only is None or only == tag:
                changed |= _redact_path(record, keys, self.marker, top=True)
        changed |= self._follow_results(event, record)
        if self._patterns:
            before = dict(record)
            for key, value in record.items():
                if key not in _ENVELOPE or key in _SCRUBBED_IDS:
                    new = self._scrub(value)
                    if new is not value:
                        record[key] = new
                        changed = True
            if changed:
                _resummarise(before, record)
        return from_record(record) if changed else event

    def _follow_results(self, event: EventBase, record: dict[str, Any]) -> bool:
        """Remember a tool result the paths redacted; redact it in later requests of the
        run (the request JSON repeats every earlier result to the model)."""
        runs, run_id = self._results, event.run_id
        if record.get("type") == "tool.end":
            before = getattr(event, "result", None)
            if isinstance(before, str) and record.get("result") != before:
                runs.setdefault(run_id, {})[str(record.get("tool_call_id"))] = (
                    before, str(record.get("result")))
            return False
        if record.get("type") in ("run.end", "run.error"):
            runs.pop(run_id, None)
            return False
        request, seen = record.get("request_ref"), runs.get(run_id)
        if record.get("type") != "llm.start" or not seen or not isinstance(request, str):
            return False
        redacted = _redact_results(request, seen)
        if redacted == request:
            return False
        record["request_ref"] = redacted
        return True

    def _escaped(self, event: EventBase) -> EventBase:
        """An event ``to_record`` cannot spell: redacted in its escaped form
        (``recorder.write._safe``), which is what the store would keep of it anyway."""
        clean = copy.copy(event)
        for f in dataclasses.fields(event):
            if f.name in _SCRUBBED_IDS:
                object.__setattr__(clean, f.name, self._scrub(getattr(event, f.name)))
            elif f.name not in _ENVELOPE:
                value = safe_value(getattr(event, f.name))
                for only, keys in self._paths:
                    if only is None or only == getattr(event, "type", None):
                        holder = {f.name: value}
                        _redact_path(holder, keys, self.marker, top=True)
                        value = holder[f.name]
                object.__setattr__(clean, f.name, self._scrub(value))
        return clean

    def scrub(self, value: Any) -> Any:
        """``value`` (a text, or lists and mappings of them) with every pattern's match
        redacted; ``value`` itself when nothing matched. What the intake applies to a
        foreign batch before it is stored raw (paths name event fields a batch has not)."""
        return self._scrub(value)

    def _scrub(self, value: Any) -> Any:
        """``value`` with every match replaced (mapping keys too); ``value`` itself when
        nothing matched."""
        if isinstance(value, str):
            out = value
            for pattern in self._patterns:
                out = pattern.sub(lambda m: self.marker(m.group(0)), out)
            if out.endswith(CUT):
                out = self._scrub_cut(out)
            return value if out == value else out
        if isinstance(value, list):
            items = [self._scrub(v) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict):
            pairs = [(self._scrub(k), self._scrub(v)) for k, v in value.items()]
            same = all(k is k0 and v is value[k0] for (k, v), k0 in zip(pairs, value, strict=True))
            return value if same else dict(pairs)
        return value

    def _scrub_cut(self, text: str) -> str:
        """A text cut short (ending in ``…``: summaries, evidence, OpenTelemetry clips) is
        searched as if it went on: where a pattern could still match past the cut (a
        partial match running into it), the part before the cut is a secret cut in two
        and is redacted. The same as redacting before the cut, whoever made it."""
        body = text[: -len(CUT)]
        offset = max(0, len(body) - _CUT_WINDOW)
        window = body[offset:]
        starts = [m.start() for pattern in self._partials
                  for m in pattern.finditer(window, partial=True)
                  if m.partial and len(window) - m.start() >= _MIN_PART]
        if not starts:
            return text
        start = offset + min(starts)
        return body[:start] + self.marker(body[start:]) + CUT


def _partial(pattern: re.Pattern[str]) -> regex.Pattern[str]:
    """``pattern`` for the ``regex`` module, which can tell a match cut short at the end."""
    flags = 0
    for name in ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII"):
        if pattern.flags & getattr(re, name):
            flags |= getattr(regex, name)
    return regex.compile(pattern.pattern, flags)


CUT = "…"
"""What ends a text cut short (``footprint.events.summarize_content``, OpenTelemetry clips)."""
_CUT_WINDOW = 256
_MIN_PART = 4
"""A part of a secret shorter than this, at a cut, gives nothing away."""
_SUMMARIES: dict[str, tuple[tuple[str, str], ...]] = {
    "context.injected": (("content_summary", "raw_content"),),
}
"""Per event type, ``(summary field, the field it summarises)``."""


def _resummarise(before: dict[str, Any], record: dict[str, Any]) -> None:
    """Redact before summarising: a summary the engine took of a text that redaction
    changed is taken again, of the redacted text (a secret cut by the summary's limit
    would escape every pattern)."""
    for summary, source in _SUMMARIES.get(str(record.get("type")), ()):
        raw, redacted = before.get(source), record.get(source)
        if (isinstance(raw, str) and isinstance(redacted, str) and redacted != raw
                and before.get(summary) == summarize_content(raw)):
            record[summary] = summarize_content(redacted)


def _redact_results(request: str, seen: Mapping[str, tuple[str, str]]) -> str:
    """``request`` (a recorded request's JSON) with each remembered tool result redacted
    in the tool message that carries it."""
    try:
        wire = json.loads(request)
    except ValueError:
        return request
    messages = wire.get("messages") if isinstance(wire, dict) else None
    changed = False
    for message in messages if isinstance(messages, list) else ():
        pair = seen.get(str(message.get("tool_call_id"))) if isinstance(message, dict) else None
        content = message.get("content") if pair is not None else None
        if pair is not None and isinstance(content, str) and pair[0] in content:
            message["content"] = content.replace(pair[0], pair[1])
            changed = True
    return json.dumps(wire, ensure_ascii=False) if changed else request


def _payload_fields() -> dict[str, frozenset[str]]:
    return {tag: frozenset(f.name for f in dataclasses.fields(cls)) - _ENVELOPE
            for tag, cls in EVENT_TYPES.items()}


def _parse_path(path: str) -> tuple[str | None, tuple[str, ...]]:
    only, _, dotted = path.rpartition(":") if ":" in path else (None, "", path)
    keys = tuple(dotted.split("."))
    if not dotted or any(not k for k in keys) or keys[0] in _ENVELOPE:
        raise ConfigError(
            f"redaction path {path!r} is not a payload key path; write dotted keys such as "
            "'args.api_key' or 'tool.start:args.password' ('*' matches any key)"
        )
    fields = _payload_fields()
    if only and only not in fields:
        raise ConfigError(f"redaction path {path!r}: no event type {only!r}"
                          f"{did_you_mean(only, list(fields))}; it would never match")
    known = fields[only] if only else frozenset().union(*fields.values())
    if keys[0] != "*" and keys[0] not in known:
        where = f"{only!r} events have no field" if only else "no event has a field"
        raise ConfigError(f"redaction path {path!r}: {where} {keys[0]!r}"
                          f"{did_you_mean(keys[0], sorted(known))}; it would never match")
    return (only or None), keys


def _redact_path(node: Any, keys: tuple[str, ...], mark: Callable[[str], str], *,
                 top: bool = False) -> bool:
    head, rest = keys[0], keys[1:]
    if isinstance(node, dict):
        names = [k for k in node if k not in _ENVELOPE or not top] if head == "*" else [head]
        slots: list[Any] = [k for k in names if k in node]
    elif isinstance(node, list) and (head == "*" or head.isdigit()):
        slots = list(range(len(node))) if head == "*" else [int(head)]
        slots = [i for i in slots if i < len(node)]
    else:
        return False
    changed = False
    for slot in slots:
        if rest and isinstance(node[slot], str):
            changed |= _redact_in_text(node, slot, rest, mark)
        elif rest:
            changed |= _redact_path(node[slot], rest, mark)
        elif node[slot] is not None:
            node[slot] = mark(_as_text(node[slot]))
            changed = True
    return changed


def _redact_in_text(holder: Any, slot: Any, keys: tuple[str, ...],
                    mark: Callable[[str], str]) -> bool:
    """Go on into ``holder[slot]`` when it is a JSON text (a tool result the model read);
    write the text back, redacted, when a key inside it matched."""
    text: str = holder[slot]
    if text[:1] not in ("{", "["):
        return False
    try:
        inner = json.loads(text)
    except ValueError:
        return False
    if not _redact_path(inner, keys, mark):
        return False
    holder[slot] = json.dumps(inner, ensure_ascii=False)
    return True


def capture(level: CaptureLevel, *, key: bytes | str | None = None,
            key_file: str | os.PathLike[str] | None = None) -> Processor:
    """A processor keeping ``full`` text, only ``hashes`` of it, or ``none`` of it.

    Acts on :data:`CONTENT_FIELDS`. ``hashes`` turns a text into its keyed
    marker ``[redacted hmac-sha256:<key id>:<hex>]`` (a mapping into
    ``{"hmac-sha256": hex, "key_id": id}``), the key taken as
    :class:`Redactor` takes it (``key``, ``key_file``); ``none`` empties it.
    ``full`` is the local store's default and changes nothing.
    """
    if level not in ("full", "hashes", "none"):
        raise ConfigError(f"capture level {level!r} is unknown; use 'full', 'hashes' or 'none'")
    secret = redaction_key(key, key_file=key_file, origin="capture") if level == "hashes" else None

    def process(event: EventBase) -> EventBase | Drop:
        if level == "full":
            return event
        changes: dict[str, Any] = {}
        for name in CONTENT_FIELDS:
            value = getattr(event, name, None)
            if value is None or not hasattr(type(event), name):
                continue
            changes[name] = _captured(value, secret)
        return dataclasses.replace(event, **changes) if changes else event

    return process


def _captured(value: object, key: RedactionKey | None) -> object:
    """``value`` as its keyed marker (``key`` given: level ``hashes``), else emptied."""
    if key is None:
        return {} if isinstance(value, Mapping) else ""
    made = key.marker(_as_text(value if not isinstance(value, Mapping) else dict(value)))
    if not isinstance(value, Mapping):
        return made
    found = parse_marker(made)
    return {KEYED_SCHEME: found.digest if found else "", "key_id": key.key_id}
