"""Deterministic trace and span ids: a run's trace id and every event's span id, from the event.

The OTel sink and the Parquet writer never talk to each other; both call
:class:`OTelIds`, so the ids a backend shows are the ids the local record
carries. The trace id is a hash of the run id (uniform, so ratio sampling
on it is fair); a span id is a hash of the run id and the span's key:

- ``run``                         the root ``invoke_agent`` span;
- ``iteration#<turn>.<n>``        one loop iteration;
- ``llm#…``                       one model call (its step id, else the iteration);
- ``tool#<call id>``              one tool call.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict

from footprint._errors import ConfigError
from footprint.events import EventBase

__all__ = ["ROOT_KEY", "OTelIds", "iteration_key", "span_id_of", "span_key", "trace_id_of"]

ROOT_KEY = "run"
_MASK64 = (1 << 64) - 1

# Events that always belong to the run's root span, whatever their iteration.
_ROOT_TYPES = frozenset({
    "run.configured", "run.start", "run.end", "run.error",
    "skill.graph_declared", "injection.declared", "skill.turn_routed",
})
# Events carried by the tool span named by their ``tool_call_id`` (they happen inside the call).
_IN_TOOL_TYPES = frozenset({"skill.rejected", "skill.step_skipped"})


def trace_id_of(run_id: str) -> int:
    """The 128-bit trace id of a run: the first 16 bytes of sha256(run id), never zero."""
    digest = hashlib.sha256(b"footprint.trace\x1f" + run_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:16], "big") or 1


def span_id_of(run_id: str, key: str) -> int:
    """The 64-bit span id of the span ``key`` in run ``run_id``, never zero."""
    digest = hashlib.sha256(f"footprint.span\x1f{run_id}\x1f{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") or 1


def iteration_key(turn: int, iteration: int) -> str:
    return f"iteration#{turn}.{iteration}"


def span_key(event: EventBase) -> str:
    """The key of the span an event belongs to (see the module docstring)."""
    tag = getattr(event, "type", "")
    if tag in _ROOT_TYPES or event.iteration <= 0:
        return ROOT_KEY
    if tag == "llm.start" or tag == "llm.end":
        step = event.step_id
        return step if step.startswith("llm#") else f"llm#{event.turn}.{event.iteration}"
    if tag == "tool.start" or tag == "tool.end":
        return "tool#" + str(getattr(event, "tool_call_id", ""))
    if tag in _IN_TOOL_TYPES:
        call = getattr(event, "tool_call_id", None)
        if call:
            return "tool#" + str(call)
    return iteration_key(event.turn, event.iteration)


class OTelIds:
    """Trace/span ids and the per-run sampling verdict, with a small per-run cache.

    ``sample_ratio`` keeps a run when the low 64 bits of its trace id fall
    below ``ratio * 2**64`` — the rule of OpenTelemetry's ``TraceIdRatioBased``,
    so a provider sampling by the same ratio agrees. :meth:`stamp` is a
    recorder processor: it writes the ids into every event of a sampled run,
    so the Parquet record names the trace and span that mirror it.
    """

    __slots__ = ("_bound", "_cache", "_cache_size", "_fields", "_spans", "sample_ratio")

    def __init__(self, sample_ratio: float = 1.0, *, cache_size: int = 256) -> None:
        if not 0.0 <= sample_ratio <= 1.0 or cache_size < 1:
            raise ConfigError(
                f"OTelIds(sample_ratio={sample_ratio!r}, cache_size={cache_size!r}): the ratio "
                "must be within 0.0..1.0 (1.0 keeps every run) and the cache positive"
            )
        self.sample_ratio = sample_ratio
        self._bound = round(sample_ratio * (_MASK64 + 1))
        self._cache: OrderedDict[str, tuple[int, str, bool]] = OrderedDict()
        self._cache_size = cache_size
        self._spans: dict[tuple[str, str], str] = {}
        self._fields: dict[type, tuple[str, ...]] = {}

    def _run(self, run_id: str) -> tuple[int, str, bool]:
        hit = self._cache.get(run_id)
        if hit is None:
            trace = trace_id_of(run_id)
            hit = (trace, f"{trace:032x}", (trace & _MASK64) < self._bound)
            self._cache[run_id] = hit
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return hit

    def trace_id(self, run_id: str) -> int:
        return self._run(run_id)[0]

    def trace_hex(self, run_id: str) -> str:
        """The trace id as backends print it (32 lowercase hex digits)."""
        return self._run(run_id)[1]

    def sampled(self, run_id: str) -> bool:
        """Whether this run's spans are exported (the Parquet record is kept either way)."""
        return self._run(run_id)[2]

    def span_id(self, run_id: str, key: str) -> int:
        return span_id_of(run_id, key)

    def span_hex(self, run_id: str, key: str) -> str:
        """The span id as backends print it (16 lowercase hex digits), cached."""
        spans = self._spans
        hit = spans.get((run_id, key))
        if hit is None:
            if len(spans) >= 64 * self._cache_size:
                spans.clear()
            hit = spans[(run_id, key)] = f"{span_id_of(run_id, key):016x}"
        return hit

    def ids_for(self, event: EventBase) -> tuple[str, str]:
        """``(trace id hex, span id hex)`` of the span ``event`` belongs to."""
        return self.trace_hex(event.run_id), self.span_hex(event.run_id, span_key(event))

    def stamp(self, event: EventBase) -> EventBase:
        """Processor: the event with ``trace_id``/``span_id`` set (unchanged when unsampled)."""
        run = self._run(event.run_id)
        if not run[2]:
            return event
        span = self.span_hex(event.run_id, span_key(event))
        if event.trace_id == run[1] and event.span_id == span:
            return event
        return self._with_ids(event, run[1], span)

    def _with_ids(self, event: EventBase, trace: str, span: str) -> EventBase:
        """``event`` with new ids: ``dataclasses.replace`` without re-running ``__init__``.

        Events are frozen and already validated; this builds the new object the
        way a frozen dataclass's own ``__init__`` does (``object.__setattr__``
        before anyone can see it), at half the cost of ``replace``.
        """
        cls = type(event)
        names = self._fields.get(cls)
        if names is None:
            names = tuple(f.name for f in dataclasses.fields(cls)
                          if f.name not in ("trace_id", "span_id"))
            self._fields[cls] = names
        new = object.__new__(cls)
        put = object.__setattr__
        for name in names:
            put(new, name, getattr(event, name))
        put(new, "trace_id", trace)
        put(new, "span_id", span)
        return new
