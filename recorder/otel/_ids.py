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

import hashlib
from collections import OrderedDict

from footprint._errors import ConfigError
from footprint.events import EventBase
from recorder.otel._restamp import Restamp, compile_restamp

__all__ = ["ROOT_KEY", "OTelIds", "iteration_key", "span_id_of", "span_key", "trace_id_of"]

ROOT_KEY = "run"
_MASK64 = (1 << 64) - 1
_MAX_SPANS_PER_RUN = 128  # a run's span-id cache starts over beyond this (spans end fast)

# Which span an event type belongs to: the root, its model call, its tool call, or the
# tool call named by its ``tool_call_id`` if any (else, like every other type, its iteration).
_ROOT, _LLM, _TOOL, _IN_TOOL, _ITERATION = range(5)
_KIND: dict[str, int] = {
    **dict.fromkeys(("run.configured", "run.start", "run.end", "run.error",
                     "skill.graph_declared", "injection.declared", "skill.turn_routed"), _ROOT),
    "llm.start": _LLM, "llm.end": _LLM, "tool.start": _TOOL, "tool.end": _TOOL,
    "skill.rejected": _IN_TOOL, "skill.step_skipped": _IN_TOOL,
}


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
    kind = _KIND.get(getattr(event, "type", ""), _ITERATION)
    if kind == _ROOT or event.iteration <= 0:
        return ROOT_KEY
    if kind == _ITERATION:
        return f"iteration#{event.turn}.{event.iteration}"
    if kind == _LLM:
        step = event.step_id
        return step if step.startswith("llm#") else f"llm#{event.turn}.{event.iteration}"
    if kind == _TOOL:
        return "tool#" + str(getattr(event, "tool_call_id", ""))
    call = getattr(event, "tool_call_id", None)
    return "tool#" + str(call) if call else f"iteration#{event.turn}.{event.iteration}"


class _RunIds:
    """One run's trace id, sampling verdict and span ids (``key -> (int, hex)``)."""

    __slots__ = ("run_id", "sampled", "spans", "trace", "trace_hex")

    def __init__(self, run_id: str, bound: int) -> None:
        self.run_id = run_id
        self.trace = trace_id_of(run_id)
        self.trace_hex = f"{self.trace:032x}"
        self.sampled = (self.trace & _MASK64) < bound
        self.spans: dict[str, tuple[int, str]] = {}

    def span(self, key: str) -> tuple[int, str]:
        hit = self.spans.get(key)
        if hit is None:
            if len(self.spans) >= _MAX_SPANS_PER_RUN:
                self.spans.clear()
            number = span_id_of(self.run_id, key)
            hit = self.spans[key] = (number, f"{number:016x}")
        return hit


class OTelIds:
    """Trace/span ids and the per-run sampling verdict, with a small per-run cache.

    ``sample_ratio`` keeps a run when the low 64 bits of its trace id fall
    below ``ratio * 2**64`` — the rule of OpenTelemetry's ``TraceIdRatioBased``,
    so a provider sampling by the same ratio agrees. :meth:`stamp` is a
    recorder processor: it writes the ids into every event of a sampled run,
    so the Parquet record names the trace and span that mirror it.
    """

    __slots__ = ("_bound", "_cache", "_cache_size", "_last", "_restamps", "sample_ratio")

    def __init__(self, sample_ratio: float = 1.0, *, cache_size: int = 256) -> None:
        if not 0.0 <= sample_ratio <= 1.0 or cache_size < 1:
            raise ConfigError(
                f"OTelIds(sample_ratio={sample_ratio!r}, cache_size={cache_size!r}): the ratio "
                "must be within 0.0..1.0 (1.0 keeps every run) and the cache positive"
            )
        self.sample_ratio = sample_ratio
        self._bound = round(sample_ratio * (_MASK64 + 1))
        self._cache: OrderedDict[str, _RunIds] = OrderedDict()
        self._cache_size = cache_size
        self._last: _RunIds | None = None  # one reference, so a racing reader sees a whole pair
        self._restamps: dict[type, Restamp] = {}

    def _run(self, run_id: str) -> _RunIds:
        last = self._last
        if last is not None and last.run_id == run_id:
            return last
        hit = self._cache.get(run_id)
        if hit is None:
            hit = self._cache[run_id] = _RunIds(run_id, self._bound)
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._last = hit
        return hit

    def trace_id(self, run_id: str) -> int:
        return self._run(run_id).trace

    def trace_hex(self, run_id: str) -> str:
        """The trace id as backends print it (32 lowercase hex digits)."""
        return self._run(run_id).trace_hex

    def sampled(self, run_id: str) -> bool:
        """Whether this run's spans are exported (the Parquet record is kept either way)."""
        return self._run(run_id).sampled

    def span_id(self, run_id: str, key: str) -> int:
        """The span id of ``key`` in ``run_id`` (cached)."""
        return self._run(run_id).span(key)[0]

    def span_hex(self, run_id: str, key: str) -> str:
        """The span id as backends print it (16 lowercase hex digits), cached."""
        return self._run(run_id).span(key)[1]

    def ids_for(self, event: EventBase) -> tuple[str, str]:
        """``(trace id hex, span id hex)`` of the span ``event`` belongs to."""
        run = self._run(event.run_id)
        return run.trace_hex, run.span(span_key(event))[1]

    def stamp(self, event: EventBase) -> EventBase:
        """Processor: the event with ``trace_id``/``span_id`` set (unchanged when unsampled)."""
        run = self._run(event.run_id)
        if not run.sampled:
            return event
        span = run.span(span_key(event))[1]
        trace = run.trace_hex
        if event.span_id == span and event.trace_id == trace:
            return event
        cls = type(event)
        restamp = self._restamps.get(cls)
        if restamp is None:
            restamp = self._restamps[cls] = compile_restamp(cls)
        return restamp(event, trace, span)
