"""Why's sentence search on planted long pieces (tests/sentence_cases.py).

``why_sentence_named`` (goal 1.0): the share of the planted cases whose report names
exactly the planted sentence(s) or line(s), in the planted way (one ``sentence``, two
``each`` needed, two only ``together``), confirmed by an experiment — in the re-run tier
(``lens.why(..., agent=factory)``), plus each single-sentence case once more in the
re-send tier (``resend=`` the case's model). ``why_sentence_extra_calls``: the mean
model calls the sentence search spent per case (screens and confirming tests, the
interleaved baselines included); ``why_sentence_extra_calls_median`` its median and
``why_sentence_extra_calls_max`` its largest. ``why_sentence_calls_over_goal``: cases
that spent more than the goal 2 × log2(sentences) × the seeds per test (``--seeds``,
12 by default) (goal 0).
``why_sentence_cases`` is the number of cases run.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]


def _named(case: Any, report: Any) -> bool:
    claims = [c for c in report.sentences if c.kind != "whole"]
    if len(claims) != 1:
        return False
    got = sorted(s.text for s in claims[0].spans)
    return claims[0].kind == case.kind and got == sorted(case.planted)


def _over(claim: Any, seeds: int) -> bool:
    return claim.model_calls > 2 * math.log2(max(2, claim.units)) * seeds


def figures(quick: bool) -> dict[str, float]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from sentence_cases import agent_of, cases, recorded

    from footprint import FunctionModel
    from lens import why

    named: list[bool] = []
    calls: list[int] = []
    over = 0
    for case in cases():
        events, run_id = recorded(case)
        tiers: list[dict[str, Any]] = [{"agent": agent_of(case)}]
        if case.kind == "sentence" and not quick:
            tiers.append({"resend": FunctionModel(case.model)})
        for tier in tiers:
            report = why(events, run_id, **tier)
            named.append(_named(case, report))
            calls.append(sum(c.model_calls for c in report.sentences))
            over += sum(_over(c, report.seeds) for c in report.sentences)
    return {"why_sentence_named": round(sum(named) / len(named), 3),
            "why_sentence_extra_calls": round(statistics.mean(calls), 1),
            "why_sentence_extra_calls_median": float(statistics.median(calls)),
            "why_sentence_extra_calls_max": float(max(calls)),
            "why_sentence_calls_over_goal": float(over),
            "why_sentence_cases": float(len(named))}


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
