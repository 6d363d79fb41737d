"""``experiment compare``'s report: the comparison explained, and as JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from footprint._errors import ConfigError
from footprint.events import ListSink
from lens.explain._experiment_cause import explain_regressions
from lens.explain._experiment_compare import Comparison, compare_experiments
from lens.explain._experiment_run import Scoring, scoring_from
from lens.playback._agent_ref import build_agent, load_target
from recorder._datasets import load_dataset
from recorder._experiments import load_experiment

__all__ = ["explained", "to_json"]


def _candidate(ref: str) -> tuple[Callable[[], Any] | None, str]:
    """A builder of B's agent from its stored reference, or why it cannot be rebuilt."""
    try:
        target = load_target(ref)
    except ConfigError as exc:
        return None, f"the agent {ref!r} cannot be rebuilt ({exc})"
    return (lambda: build_agent(target, ListSink())), ""


def _scoring(spec: str) -> tuple[Scoring | None, str]:
    try:
        return scoring_from(spec), ""
    except ConfigError as exc:
        return None, f"B's scoring {spec!r} cannot be rebuilt ({exc})"


def explained(store: Any, a: str, b: str) -> Comparison:
    """Experiments ``a`` and ``b`` of ``store`` compared, every regression explained."""
    first, second = load_experiment(store, a), load_experiment(store, b)
    data = load_dataset(store, second.meta.dataset, second.meta.version)
    build, why_agent = _candidate(second.meta.agent)
    baseline, _ = _candidate(first.meta.agent)
    scoring, why_scoring = _scoring(second.meta.comparator)
    comparison = compare_experiments(first, second)
    return explain_regressions(store, comparison, {i.item_id: i for i in data.items},
                               (build, baseline), scoring, why_agent or why_scoring)


def to_json(c: Comparison) -> dict[str, Any]:
    """The report for a CI job: the summary and every item."""
    return {"a": c.a.meta.name, "b": c.b.meta.name, "dataset": c.b.meta.dataset,
            "versions": [c.a.meta.version, c.b.meta.version],
            "summary": {"items": len(c.items), "regressed": c.count("regressed"),
                        "improved": c.count("improved"), "unchanged": c.count("unchanged"),
                        "changed": c.count("changed"), "p_value": c.p_value,
                        "cost_delta_usd": c.cost_delta_usd,
                        "latency_delta_ms": c.latency_delta_ms,
                        "only_a": list(c.only_a), "only_b": list(c.only_b)},
            "items": [dataclasses.asdict(i) for i in c.items]}
