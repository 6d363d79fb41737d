"""``footprint why RUN``: the answer's causal past, suspects ranked, and — with
``--agent`` — a search by counterfactual re-runs that may call a suspect a cause; with
``--resend`` the same search re-sends the explained call's recorded request instead.

Exit 0 with a report, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from footprint._errors import FootprintError
from lens.cli._common import count_arg

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``why`` on the CLI's subparsers."""
    p = sub.add_parser("why", help="why did a run answer that: causal past, suspects, and "
                                   "counterfactual re-runs with --agent (or re-sends of the "
                                   "recorded request with --resend)")
    p.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    p.add_argument("--agent", metavar="MODULE:FACTORY", default=None,
                   help="rebuild this agent to re-run without candidates (causal verdicts); "
                        "without it the report is correlational only")
    _resend_options(p)
    p.add_argument("--allow-mismatch", action="store_true",
                   help="with --agent: re-run even when the agent is not configured as the "
                        "recorded run (another model, tool, graph or injection); by default "
                        "that exits 2 naming the difference")
    p.add_argument("--step", default=None, metavar="llm#k",
                   help="explain this model call instead of the last one")
    outcome = p.add_mutually_exclusive_group()
    outcome.add_argument("--expect", metavar="TEXT|/REGEX/", default=None,
                         help="the answer you wanted: a re-run 'fixes' the run when its answer "
                              "contains TEXT (whole words, facts in normal form) or "
                              "matches /REGEX/")
    outcome.add_argument("--judge", metavar="MODULE:FUNC", default=None,
                         help="label answers with your function answer -> label")
    outcome.add_argument("--label", action="store_true",
                         help="compare answers by their first word only (APPROVED: …)")
    p.add_argument("--budget", type=count_arg(1, 10_000), default=None, metavar="N",
                   help="at most N re-runs or re-sends (default: as many as the search needs)")
    p.add_argument("--seeds", type=count_arg(1, 10_000), default=None, metavar="N",
                   help="live baseline re-runs and most re-runs per test (default 12)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="the error level of a causal claim, family-wise (default 0.05)")
    p.add_argument("--no-sentences", action="store_true",
                   help="do not search a confirmed piece for the sentence(s) or line(s) its "
                        "effect comes from (saves those re-runs or re-sends)")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (checked against the shipped schema)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def _resend_options(p: Any) -> None:
    """The re-send tier's options (``--resend`` and what shapes each re-send)."""
    tier = p.add_argument_group("re-send tier (request-level, no agent needed)")
    tier.add_argument("--resend", action="store_true",
                      help="re-send the explained call's recorded request with pieces removed "
                           "(claims hold for that request; later steps are not re-run)")
    tier.add_argument("--provider", metavar="FILE.py:FACTORY|MODULE:FACTORY", default=None,
                      help="with --resend: a factory returning the Provider to re-send through")
    tier.add_argument("--base-url", metavar="URL", default=None,
                      help="with --resend: an OpenAI-compatible server to re-send to")
    tier.add_argument("--model", metavar="NAME", default=None,
                      help="with --resend: the model name to send (default: the recorded one)")
    tier.add_argument("--max-tokens", type=count_arg(1, 1_000_000), default=None, metavar="N",
                      help="with --resend: max_tokens of every re-send (default: the recorded "
                           "one, else 1024, flagged)")
    tier.add_argument("--temperature", type=float, default=None, metavar="T",
                      help="with --resend: temperature of every re-send (default: the recorded "
                           "one)")
    tier.add_argument("--stop", action="append", default=None, metavar="TEXT",
                      help="with --resend: a stop sequence of every re-send (repeat for more; "
                           "default: the recorded ones)")
    tier.add_argument("--timeout", type=float, default=None, metavar="S",
                      help="with --resend: seconds for the whole command; the call under way "
                           "is cancelled and the search stops (default 900, printed in the "
                           "plan)")
    tier.add_argument("--call-timeout", type=float, default=None, metavar="S",
                      help="with --resend: seconds for one re-send, then it is cancelled "
                           "(default 120)")
    tier.add_argument("--param", action="append", default=None, metavar="KEY=JSON",
                      help="with --resend: any other parameter of every re-send, e.g. "
                           "top_p=0.9 (repeat for more; default: the recorded ones)")


@contextmanager
def _bar(enabled: bool, what: str = "re-run") -> Iterator[Any]:
    """A rich progress bar on stderr while re-runs go (``None`` when off)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(file=sys.stderr)
    with Progress(TextColumn(f"why: {what}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), console=console, transient=True) as bar:
        task = bar.add_task("", total=None)

        def tick(done: int, total: int | None, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what)

        yield tick


def run(args: argparse.Namespace) -> int:
    """Print the why report; 0 on success, 2 on bad input."""
    from lens.cli._common import open_from

    try:
        _tier_args(args)
        store = open_from(args)
        try:
            report = _resend(store, args) if args.resend else _rerun(store, args)
        finally:
            store.close()
    except FootprintError as exc:
        print(f"footprint why: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if not args.resend:
            raise
        print("footprint why: interrupted; the re-send under way was cancelled (its "
              "connection closed)", file=sys.stderr)
        return 130
    _print(report, args)
    return 0


def _rerun(store: Any, args: argparse.Namespace) -> Any:
    """The re-run tier (or, without ``--agent``, the correlational report)."""
    from lens.explain._why import why
    from lens.playback._agent_ref import load_target

    agent = load_target(args.agent) if args.agent else None  # built per seed
    with _bar(agent is not None) as tick:
        return why(store, args.run, agent=agent, step=args.step,
                   expect=args.expect, judge=args.judge, budget=args.budget,
                   label=args.label, seeds=args.seeds, alpha=args.alpha,
                   progress=tick, allow_mismatch=args.allow_mismatch,
                   plan=_say, sentences=not args.no_sentences)


def _print(report: Any, args: argparse.Namespace) -> None:
    """The report as JSON (``--json``), or as text in its tier's words."""
    from lens.explain._report import render_why, why_json

    if args.json:
        print(why_json(report))
        return
    if args.resend:
        from lens.explain._resend_why import render_resend

        print("\n".join(render_resend(report)))
        return
    print("\n".join(render_why(report)))


def _say(line: str) -> None:
    """The plan, on stderr before any re-run or re-send is spent (each of its lines)."""
    for part in line.splitlines():
        print(f"footprint why: {part}", file=sys.stderr, flush=True)


def _tier_args(args: argparse.Namespace) -> None:
    """The re-send options make sense only with ``--resend``, and it needs somewhere to send."""
    from footprint._errors import ConfigError

    given = [f for f, v in (("--provider", args.provider), ("--base-url", args.base_url),
                            ("--model", args.model), ("--max-tokens", args.max_tokens),
                            ("--temperature", args.temperature), ("--stop", args.stop),
                            ("--param", args.param), ("--timeout", args.timeout),
                            ("--call-timeout", args.call_timeout)) if v is not None]
    if not args.resend:
        if given:
            raise ConfigError(f"{given[0]} is an option of the re-send tier; add --resend")
        return
    if args.agent:
        raise ConfigError("--agent and --resend are two tiers (re-run the agent, or re-send "
                          "one request); pick one")
    if not args.provider and not args.base_url:
        raise ConfigError("--resend needs somewhere to send: --provider FILE.py:FACTORY or "
                          "--base-url URL --model NAME")


def _resend(store: Any, args: argparse.Namespace) -> Any:
    """The re-send tier: the plan on stderr before any call, then the report."""
    from lens.explain._params import supplied_of
    from lens.explain._resend import DEFAULT_CALL_S, DEFAULT_TOTAL_S, Limits
    from lens.explain._resend_why import why

    params = supplied_of(args.max_tokens, args.temperature, args.stop, args.param)
    limits = Limits(
        call_s=DEFAULT_CALL_S if args.call_timeout is None else args.call_timeout,
        total_s=DEFAULT_TOTAL_S if args.timeout is None else args.timeout)

    with _bar(True, "re-send") as tick:
        return why(store, args.run, resend=args.provider, base_url=args.base_url,
                   model=args.model, step=args.step, expect=args.expect, judge=args.judge,
                   budget=args.budget, label=args.label, seeds=args.seeds, alpha=args.alpha,
                   progress=tick, plan=_say, params=params, limits=limits,
                   sentences=not args.no_sentences)
