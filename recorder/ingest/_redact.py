"""Redaction on intake: the raw batch is redacted before it is written (every string of the
OTLP request searched with the redactors' patterns, re-encoded in its own format), and the
mapped runs go through the same processors as a native recording's (``Recorder``).

``STORE/redaction.json`` (``{"patterns": [...], "paths": [...]}``, both optional; no
``patterns`` key: the API-key patterns) is the store's configuration that ``--redact``
reads, so ``receive``, ``ingest`` and ``ingest --remap`` redact alike. A store on object
storage keeps it in the bucket (``s3://bucket/prefix/redaction.json``), so every receiver
writing that store redacts alike."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from footprint._errors import ConfigError, RunError
from recorder.ingest._raw import Format, Signal
from recorder.write._process import API_KEY_PATTERNS, Redactor
from recorder.write._sink import Processor
from recorder.write._upload import is_remote, open_uri

__all__ = ["CONFIG", "redact_body", "store_redactor"]

CONFIG = "redaction.json"
Scrub = Callable[[Any], Any]
_MESSAGE, _STRING = 11, 9
"""protobuf's ``FieldDescriptor.TYPE_MESSAGE`` and ``TYPE_STRING``."""


def store_redactor(store: str | Path) -> Redactor:
    """The store's redaction (``STORE/redaction.json``, in the bucket for a storage URI),
    or the API-key patterns."""
    where, text = _config_text(store)
    if text is None:
        return Redactor()
    try:
        conf = json.loads(text)
        if not isinstance(conf, dict) or set(conf) - {"patterns", "paths"}:
            raise ValueError("want an object with 'patterns' and/or 'paths'")
        patterns, paths = conf.get("patterns", list(API_KEY_PATTERNS)), conf.get("paths", [])
        if not all(isinstance(x, str) for x in [*patterns, *paths]):
            raise ValueError("'patterns' and 'paths' are lists of strings")
        return Redactor(paths=paths, patterns=patterns)
    except (ValueError, TypeError) as exc:  # a bad regex is a re.error, a ValueError too
        raise ConfigError(f"{where!r} is not a redaction configuration ({exc}); write "
                          '{"patterns": ["sk-[A-Za-z0-9]{16,}"], "paths": '
                          '["tool.end:result.ssn"]}') from None


def _config_text(store: str | Path) -> tuple[str, str | None]:
    """Where the store's redaction configuration is, and its text (``None``: there is none).
    A bucket that cannot be read stops here: redacting with the wrong patterns would write
    what the configuration was there to keep out."""
    if not is_remote(store):
        path = Path(store) / CONFIG
        return str(path), path.read_text(encoding="utf-8") if path.is_file() else None
    import pyarrow.fs as pafs

    uri = str(store)
    fs, base = open_uri(uri)
    where = f"{uri.split('?')[0].rstrip('/')}/{CONFIG}"
    try:
        if fs.get_file_info(f"{base}/{CONFIG}").type != pafs.FileType.File:
            return where, None
        with fs.open_input_stream(f"{base}/{CONFIG}") as stream:
            return where, stream.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RunError(f"cannot read {where!r} ({exc}); check the bucket's credentials and "
                       "endpoint, or run without --redact") from None


def scrubber(processors: Sequence[Processor]) -> Scrub | None:
    """Every redactor's patterns applied in turn, or ``None`` when there is no redactor."""
    found = [p.scrub for p in processors if isinstance(p, Redactor)]
    if not found:
        return None

    def scrub(value: Any) -> Any:
        for one in found:
            value = one(value)
        return value
    return scrub


def _walk(msg: Any, scrub: Scrub) -> None:
    for fd, value in msg.ListFields():
        if fd.type == _MESSAGE:
            for item in (value if fd.is_repeated else (value,)):
                _walk(item, scrub)
        elif fd.type == _STRING:
            if fd.is_repeated:
                value[:] = [scrub(v) for v in value]
            elif (new := scrub(value)) is not value:
                setattr(msg, fd.name, new)


def redact_body(body: bytes, signal: Signal, fmt: Format, scrub: Scrub) -> bytes:
    """``body`` with every string redacted, in its own format; a body that does not parse
    is kept only as its redacted text (it can never be mapped anyway)."""
    if fmt == "json":
        try:
            return orjson.dumps(scrub(orjson.loads(body)))
        except orjson.JSONDecodeError:
            return str(scrub(body.decode("utf-8", "replace"))).encode("utf-8")
    message: Any = (ExportTraceServiceRequest() if signal == "traces"
                    else ExportLogsServiceRequest())
    try:
        message.ParseFromString(body)
    except Exception:  # protobuf's DecodeError, or worse
        return str(scrub(body.decode("utf-8", "replace"))).encode("utf-8")
    _walk(message, scrub)
    return bytes(message.SerializeToString())
