"""Evaluation results to OpenTelemetry: ``gen_ai.evaluation.result`` per the GenAI
semantic conventions, in the trace of the run each one evaluates.

An :class:`Evaluation` is one result about one run (an experiment's verdict on an
item, a judge's score): ``gen_ai.evaluation.name`` (required), ``.score.value``
and ``.score.label`` (when known), ``.explanation``, ``error.type`` when the
evaluation itself failed, and ``footprint.*`` attributes saying where it comes
from. The conventions define the result as an event parented to the evaluated
operation; a result made after the run's spans were sent cannot join them, so it
travels as :func:`~recorder.otel._mapping.evaluation_span` does for feedback: a
zero-duration span of that name, child of the run's root ``invoke_agent`` span
(ids derived from the run id, the ones the backend holds), carrying the event of
the same name. A result's span id derives from its ``key``: exporting the same
results again sends the same spans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SpanExporter

from footprint._errors import ConfigError
from recorder.otel._attributes import Attrs, clip
from recorder.otel._chunks import Target
from recorder.otel._ids import ROOT_KEY
from recorder.otel._mapping import EVALUATION_EVENT, SpanRecord
from recorder.otel._pump import Delivery, pump
from recorder.otel._spans import SpanFactory

__all__ = ["Evaluation", "EvaluationExport", "evaluation_result_span", "export_evaluations"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """One evaluation result about run ``run_id`` (``key``: unique within the run)."""

    run_id: str
    key: str
    name: str
    ts_ns: int
    value: float | None = None
    label: str | None = None
    explanation: str | None = None
    error_type: str | None = None
    attributes: Mapping[str, str | int | float | bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label, text in (("run_id", self.run_id), ("key", self.key), ("name", self.name)):
            if not isinstance(text, str) or not text:
                raise ConfigError(f"Evaluation({label}={text!r}): pass non-empty text")
        if type(self.ts_ns) is not int or self.ts_ns < 0:
            raise ConfigError(f"Evaluation(ts_ns={self.ts_ns!r}): pass nanoseconds since "
                              "the epoch")
        if self.value is not None and (isinstance(self.value, bool)
                                       or not isinstance(self.value, int | float)):
            raise ConfigError(f"Evaluation(value={self.value!r}): pass a number or None")


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationExport:
    """What an export sent: spans delivered, spans lost, and the runs (traces) reached."""

    sent: int
    lost: int
    runs: int


def evaluation_result_span(result: Evaluation) -> SpanRecord:
    """The ``gen_ai.evaluation.result`` span (and event) of one result."""
    attrs: Attrs = {"gen_ai.evaluation.name": clip(result.name)}
    if result.value is not None:
        attrs["gen_ai.evaluation.score.value"] = float(result.value)
    if result.label is not None:
        attrs["gen_ai.evaluation.score.label"] = clip(result.label)
    if result.explanation is not None:
        attrs["gen_ai.evaluation.explanation"] = clip(result.explanation)
    if result.error_type is not None:
        attrs["error.type"] = clip(result.error_type)
    extra: Attrs = {k: clip(v) if isinstance(v, str) else v
                    for k, v in result.attributes.items()}
    return SpanRecord(
        key=f"evaluation#{result.key}", name=EVALUATION_EVENT, kind="internal",
        parent_key=ROOT_KEY, start_ns=result.ts_ns, end_ns=result.ts_ns,
        attributes={**attrs, **extra, "footprint.run.id": result.run_id},
        events=[(EVALUATION_EVENT, result.ts_ns, attrs)],
    )


def export_evaluations(results: Iterable[Evaluation], *, endpoint: str | None = None,
                       protocol: str = "http/protobuf",
                       headers: Mapping[str, str] | None = None, timeout_s: float = 10.0,
                       exporter: SpanExporter | None = None,
                       resource: Resource | None = None) -> EvaluationExport:
    """Send each result's span to OTLP (``endpoint``: as ``export_otlp`` takes it;
    ``exporter`` replaces the OTLP one), batch by batch; what was sent and lost."""
    ordered = list(results)
    out = exporter or Target(protocol, endpoint, timeout_s,
                             tuple((headers or {}).items())).exporter()
    try:
        _, delivery = pump(((r.run_id, [evaluation_result_span(r)]) for r in ordered),
                           SpanFactory(resource or Resource.create()), out)
    finally:
        if exporter is None:
            out.shutdown()
    return _outcome(delivery, ordered)


def _outcome(delivery: Delivery, ordered: list[Evaluation]) -> EvaluationExport:
    return EvaluationExport(sent=delivery.sent, lost=delivery.lost,
                            runs=len({r.run_id for r in ordered}))
