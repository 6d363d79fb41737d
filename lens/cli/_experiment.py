"""``footprint experiment run|compare|list|export-otlp``: a candidate agent tried on a
dataset, and two experiments compared item by item with the cause of every regression.

``run DATASET --agent FILE.py:FACTORY`` records one run per item (and repeat),
scores it (``--expect``, ``--judge``, ``--label``; by default each item's expected
answer) and stores the results; ``compare A B`` pairs A's (the baseline) and B's
items: improved, regressed, unchanged, the exact sign test, cost and latency
deltas, and for each regressed item the first divergent decision and the piece
of B whose removal gives A's verdict back; ``export-otlp NAME`` sends the results
as ``gen_ai.evaluation.result`` spans in the traces of their runs. Exit 0 done, 1 a
regression under ``--fail-on-regression``, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from lens.cli._common import MAX_COUNT, clip, count_arg, seconds_arg, table

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``experiment`` and its actions on the CLI's subparsers."""
    p = sub.add_parser("experiment", help="try an agent on a dataset; compare two experiments")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True,
                            parser_class=type(p))
    r = _add_run(acts)
    c = acts.add_parser("compare", help="A (baseline) against B, item by item")
    c.add_argument("a", metavar="A")
    c.add_argument("b", metavar="B")
    c.add_argument("--format", choices=("table", "json"), default="table")
    c.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when an item regressed (for CI)")
    listing = acts.add_parser("list", help="every experiment of the store")
    sent = _add_export(acts)
    for q in (r, c, listing, sent):
        q.add_argument("--store", metavar="DIR", default=None,
                       help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def _add_run(acts: Any) -> Any:
    """``experiment run``: the candidate, the dataset version, the scoring and the pace."""
    r = acts.add_parser("run", help="run and score every item with a candidate agent")
    r.add_argument("dataset", metavar="DATASET")
    r.add_argument("--agent", required=True, metavar="FILE.py:FACTORY",
                   help="the candidate: an Agent or a factory (MODULE:ATTR or FILE.py:ATTR)")
    r.add_argument("--name", metavar="N", help="the experiment's name (default DATASET-time)")
    r.add_argument("--version", type=count_arg(1, MAX_COUNT), metavar="V",
                   help="the dataset version (default: the newest)")
    how = r.add_mutually_exclusive_group()
    how.add_argument("--expect", metavar="TEXT|/REGEX/", help="passed: the answer holds it")
    how.add_argument("--judge", metavar="MODULE:FUNC", help="passed: the judge says pass")
    how.add_argument("--label", action="store_true", help="compare the answers' first word")
    r.add_argument("--concurrency", type=count_arg(1, 256), default=8, metavar="N",
                   help="runs at a time (default 8)")
    r.add_argument("--repeat", type=count_arg(1, 1000), default=1, metavar="K",
                   help="runs per item (default 1)")
    return r


def _add_export(acts: Any) -> Any:
    """``experiment export-otlp``: the experiment to send, and where and how to send it."""
    sent = acts.add_parser("export-otlp", help="send an experiment's results to OTLP as "
                                               "gen_ai.evaluation.result spans in its runs' traces")
    sent.add_argument("name", metavar="NAME")
    sent.add_argument("--endpoint", metavar="URL", default=None,
                      help="the collector, e.g. http://127.0.0.1:4318 (default: "
                           "OTEL_EXPORTER_OTLP_* variables, then http://localhost:4318)")
    sent.add_argument("--protocol", choices=("http/protobuf", "grpc"), default="http/protobuf")
    sent.add_argument("--header", metavar="KEY=VALUE", action="append", default=[],
                      help="an extra request header, e.g. an API key for a hosted backend")
    sent.add_argument("--timeout", type=seconds_arg, default=10.0, metavar="SECONDS",
                      help="give up on the endpoint after this long (default 10)")
    return sent


def run(args: argparse.Namespace) -> int:
    from lens.cli._common import open_from

    with open_from(args) as store:
        if args.action == "run":
            return _run(store, args)
        if args.action == "compare":
            return _compare(store, args)
        if args.action == "export-otlp":
            return _export(store, args)
        return _list(store)


def _export(store: Any, args: argparse.Namespace) -> int:
    """Send the results as ``gen_ai.evaluation.result`` spans; a lost span is an error."""
    from footprint._errors import RunError
    from lens.cli._export_otlp import _headers
    from recorder._experiments import experiment_evaluations, load_experiment
    from recorder.otel import export_evaluations

    experiment = load_experiment(store, args.name)
    results = experiment_evaluations(experiment)
    done = export_evaluations(results, endpoint=args.endpoint, protocol=args.protocol,
                              headers=_headers(args.header), timeout_s=args.timeout)
    if done.lost:
        raise RunError(f"the OTLP endpoint refused or did not take {done.lost} of "
                       f"{done.sent + done.lost} evaluation spans of experiment {args.name!r}; "
                       "check --endpoint and that a collector listens there, then retry")
    left = len(experiment.results) - len(results)
    print(f"exported experiment {args.name}: {done.sent} gen_ai.evaluation.result spans in "
          f"the traces of {done.runs} runs"
          + (f" ({left} results without a run left out)" if left else ""))
    return 0


def _absolute(ref: str) -> str:
    """``FILE.py:ATTR`` with the file's absolute path (compare rebuilds it from anywhere)."""
    module, sep, attr = ref.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module) and Path(module).is_file():
        return f"{Path(module).resolve()}:{attr}"
    return ref


def _run(store: Any, args: argparse.Namespace) -> int:
    from footprint._errors import ConfigError
    from lens.explain._experiment_run import Scoring, run_experiment
    from lens.playback._agent_ref import load_target
    from recorder._datasets import load_dataset
    from recorder._experiments import ExperimentMeta, experiment_names

    data = load_dataset(store, args.dataset, args.version)
    name = args.name or f"{data.name}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    if name in experiment_names(store):
        raise ConfigError(f"experiment {name!r} exists; pick another --name")
    judge = None if args.judge is None else load_target(args.judge, flag="--judge",
                                                         kind="a function answer -> label")
    scoring = Scoring(expect=args.expect, judge=judge, judge_name=args.judge or "",
                      label=args.label)
    agent = _absolute(args.agent)
    meta = ExperimentMeta(name=name, dataset=data.name, version=data.version, agent=agent,
                          comparator=scoring.spec())
    began = time.perf_counter()
    done = run_experiment(store, data, load_target(agent), meta=meta, scoring=scoring,
                          concurrency=args.concurrency, repeat=args.repeat)
    passed = sum(1 for r in done.results if r.passed)
    judged = sum(1 for r in done.results if r.passed is not None)
    print(f"experiment {name}: {len(data.items)} items x {args.repeat} of {data.name} "
          f"v{data.version} in {time.perf_counter() - began:.2f} s; {passed}/{judged} passed "
          f"({scoring.describe()}); runs tagged experiment:{name}")
    return 0


def _list(store: Any) -> int:
    from recorder._experiments import experiment_names, load_experiment

    names = experiment_names(store)
    if not names:
        print(f"no experiments in {store.root} (footprint experiment run DATASET --agent …)")
        return 0
    rows = []
    for name in names:
        e = load_experiment(store, name)
        passed = sum(1 for r in e.results if r.passed)
        judged = sum(1 for r in e.results if r.passed is not None)
        rows.append([name, f"{e.meta.dataset} v{e.meta.version}", len(e.results),
                     f"{passed}/{judged}", e.meta.agent])
    print(table(("experiment", "dataset", "runs", "passed", "agent"), rows))
    return 0


def _compare(store: Any, args: argparse.Namespace) -> int:
    from lens.explain._experiment_report import explained, to_json

    comparison = explained(store, args.a, args.b)
    if args.format == "json":
        print(json.dumps(to_json(comparison), ensure_ascii=False))
    else:
        print("\n".join(render(comparison)))
    if args.fail_on_regression and comparison.count("regressed"):
        print(f"footprint experiment: {comparison.count('regressed')} item(s) regressed",
              file=sys.stderr)
        return 1
    return 0


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"{value:+.4f} USD"


def _summary(c: Any) -> list[str]:
    a, b = c.a.meta, c.b.meta
    lines = [f"A {a.name} ({a.dataset} v{a.version}, {clip(a.agent, 60)})",
             f"B {b.name} ({b.dataset} v{b.version}, {clip(b.agent, 60)})",
             f"{len(c.items)} items paired: {c.count('regressed')} regressed, "
             f"{c.count('improved')} improved, {c.count('unchanged')} unchanged"
             + (f", {c.count('changed')} changed (no pass to compare)"
                if c.count("changed") else "")
             + f"; exact sign test p = {c.p_value:.3g}",
             f"cost delta (B - A) {_money(c.cost_delta_usd)}; latency delta mean "
             f"{c.latency_delta_ms:+.1f} ms a run"]
    if c.only_a or c.only_b:
        lines.append(f"not paired: {len(c.only_a)} items only in A, {len(c.only_b)} only in B")
    return lines


def render(c: Any) -> list[str]:
    """The report as text lines: the summary, a table of the items that moved, and for
    each regressed item its first divergence and its cause."""
    lines = _summary(c)
    moved = [i for i in c.items if i.change != "unchanged"]
    if not moved:
        return [*lines, "no item changed"]
    rows = [[i.item_id, i.change, f"{i.a_passed}/{i.pairs}", f"{i.b_passed}/{i.pairs}",
             f"{i.p_value:.3g}", _money(i.cost_delta_usd), f"{i.latency_delta_ms:+.1f}",
             i.cause or ("-" if i.change != "regressed" else "none found")] for i in moved]
    lines += ["", table(("item", "change", "A pass", "B pass", "p", "cost delta",
                         "ms delta", "cause"), rows, width=40)]
    for i in c.items:
        if i.change == "regressed":
            lines += ["", f"{i.item_id} regressed: A {clip(i.a_answer or i.a_verdict, 60)!r}"
                      f" -> B {clip(i.b_answer or i.b_verdict, 60)!r}",
                      f"  first divergence: {i.divergence or 'none (same decisions)'}",
                      f"  cause: {i.cause or 'none named'} ({i.cause_note})",
                      f"  footprint diff {i.a_run} {i.b_run}"]
    return lines
